/**
 * Argument parsing shared by the commands: node's parseArgs with `--help` and `--version` on every
 * command, and usage errors turned into exit code 2 with one clear line.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { GridsyncError } from '../errors/index.js';
import { gridsyncVersion } from '../version.js';
import { print, printError } from './print.js';

export class UsageError extends GridsyncError {
  readonly code = 'CLI_USAGE';
}

type Options = NonNullable<ParseArgsConfig['options']>;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Options every command takes: how much it says. */
const OUTPUT_OPTIONS = { 'log-level': { type: 'string' }, quiet: { type: 'boolean', short: 'q' } } as const;
const OUTPUT_USAGE = `
  --log-level L    fatal, error, warn, info, debug, trace or silent (beats log.level and GRIDSYNC_LOG_LEVEL)
  -q, --quiet      only warnings and errors: no progress, no summary, no success lines`;

/** What the options of OUTPUT_OPTIONS asked for (set by parseCommand, read by the commands). */
export const output: { quiet: boolean; logLevel: LogLevel | undefined } = { quiet: false, logLevel: undefined };

export interface ParsedCommand<O extends Options> {
  readonly values: { [K in keyof O]?: O[K]['type'] extends 'boolean' ? boolean : O[K]['multiple'] extends true ? string[] : string };
  readonly positionals: string[];
}

/**
 * Parses `argv` for one command. Returns undefined after printing help or the version (exit 0).
 * Throws UsageError for unknown options or bad values.
 */
export function parseCommand<O extends Options>(
  argv: string[],
  usage: string,
  options: O,
  allowPositionals = false,
): ParsedCommand<O> | undefined {
  let parsed: { values: Record<string, unknown>; positionals: string[] };
  try {
    parsed = parseArgs({
      args: argv,
      options: { ...options, ...OUTPUT_OPTIONS, help: { type: 'boolean', short: 'h' }, version: { type: 'boolean', short: 'V' } },
      allowPositionals,
      strict: true,
    });
  } catch (err) {
    throw usageProblem(parserProblem(err), usage);
  }
  const level = parsed.values['log-level'];
  if (level !== undefined && !(LOG_LEVELS as readonly unknown[]).includes(level))
    throw new UsageError(`--log-level: expected one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(level)}`);
  output.quiet = parsed.values.quiet === true;
  output.logLevel = level as LogLevel | undefined;
  if (parsed.values.help) {
    print(`${usage}\n${OUTPUT_USAGE}\n`);
    return undefined;
  }
  if (parsed.values.version) {
    print(`gridsync ${gridsyncVersion()}\n`);
    return undefined;
  }
  return parsed as unknown as ParsedCommand<O>;
}

/** node's parseArgs error in an operator's words: the option or argument it could not take. */
function parserProblem(err: unknown): string {
  const e = err as { code?: string; message: string };
  const quoted = /'([^']+)'/.exec(e.message)?.[1];
  if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && quoted) return `unknown option ${quoted}`;
  if (e.code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL' && quoted) return `unexpected argument ${quoted}`;
  if (e.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && quoted) {
    // `--log-level <value>`, `-q, --quiet`: the long name.
    const option = /--[\w-]+/.exec(quoted)?.[0] ?? quoted;
    return /argument missing/.test(e.message) ? `option ${option} needs a value` : `option ${option} takes no value`;
  }
  return e.message;
}

/**
 * What is wrong first, then the usage lines and where to read more: the whole help text alone left
 * an operator to find out what was missing.
 */
export function usageProblem(problem: string, usage: string): UsageError {
  const lines = /^[^\n]*(?:\n +gridsync [^\n]*)*/.exec(usage)?.[0] ?? '';
  return new UsageError(`${problem}\n${lines}\n(${commandOf(usage)} --help for more)`);
}

/** `gridsync once` from a usage text's first line. */
function commandOf(usage: string): string {
  return /^usage: (gridsync(?: [a-z]+)?)/.exec(usage)?.[1] ?? 'gridsync';
}

/** Runs a command body; usage errors print to stderr and exit 2. */
export async function runCommand(body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (err) {
    if (err instanceof UsageError) {
      printError(`gridsync: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
}

/** Resolves when the process receives SIGTERM or SIGINT; a second signal exits at once. */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (sig: NodeJS.Signals): void => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      process.once('SIGTERM', () => process.exit(130));
      process.once('SIGINT', () => process.exit(130));
      resolve(sig);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}
