// A Logger that keeps every line (level, fields with the child bindings, message) for a test to read.
import type { Logger } from '../../src/log.js';

export interface RecordedLine {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly obj: Record<string, unknown>;
  readonly msg: string;
}

export function recorder(): Logger & { lines: RecordedLine[] } {
  const lines: RecordedLine[] = [];
  const make = (bindings: object): Logger => {
    const at =
      (level: RecordedLine['level']) =>
      (obj: object, msg: string): void => {
        lines.push({ level, obj: { ...bindings, ...obj }, msg });
      };
    return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: (b) => make({ ...bindings, ...b }) };
  };
  return Object.assign(make({}), { lines });
}
