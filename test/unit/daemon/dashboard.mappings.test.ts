// A 0/1 gauge on the Grafana dashboard shows words, not a bare 0 or 1: every panel that plots a
// gauge whose help says "1 when …" / "1 while …" carries value mappings for both values. The
// gauges are read from their declarations, so a new 0/1 gauge put on the dashboard is held too.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../../..');
const sources = fs
  .readdirSync(path.join(root, 'src/daemon'))
  .filter((f) => f.endsWith('.ts'))
  .map((f) => fs.readFileSync(path.join(root, 'src/daemon', f), 'utf8'))
  .join('\n');

/** Gauges declared with a help text that starts "1 when" or "1 while". */
const zeroOne = [...sources.matchAll(/name: '(gridsync_[a-z_]+)',\s*help: ["']1 (?:when|while)\b/g)].map((m) => m[1] as string);

interface Panel {
  title?: string;
  targets?: { expr?: string }[];
  fieldConfig?: { defaults?: { mappings?: { type: string; options?: Record<string, unknown> }[] } };
  panels?: Panel[];
}
const dashboard = JSON.parse(fs.readFileSync(path.join(root, 'deploy/grafana/gridsync-dashboard.json'), 'utf8')) as { panels: Panel[] };
const panels = (list: Panel[]): Panel[] => list.flatMap((p) => [p, ...panels(p.panels ?? [])]);

/** The values a panel maps to text (value mappings of type "value"). */
const mapped = (p: Panel): string[] =>
  (p.fieldConfig?.defaults?.mappings ?? []).filter((m) => m.type === 'value').flatMap((m) => Object.keys(m.options ?? {}));

describe('dashboard panels of 0/1 gauges map both values to words', () => {
  it('finds the 0/1 gauges', () =>
    expect(zeroOne).toEqual(expect.arrayContaining(['gridsync_service_reachable', 'gridsync_deliveries_stuck', 'gridsync_lease_held'])));
  const plotted = panels(dashboard.panels).filter((p) => (p.targets ?? []).some((t) => zeroOne.some((g) => t.expr?.includes(g))));
  it('finds such panels', () => expect(plotted.length).toBeGreaterThan(0));
  it.each(plotted.map((p) => [p.title ?? '?', p] as const))('%s', (_title, p) => {
    expect(mapped(p)).toEqual(expect.arrayContaining(['0', '1']));
  });
});
