#!/usr/bin/env -S node --max-semi-space-size=4
/**
 * The `gridsync` command: dispatches to one module per command (src/cli/<command>.ts). Each
 * command module exports `main(argv: string[]): Promise<number>` and returns the exit code
 * (docs/errors.md: 0 ok · 1 some item failed · 2 config/auth/usage error).
 *
 * Node runs with a 4 MB young-generation semi-space (shebang, npm start, systemd, Docker): parcel
 * streaming allocates fast and briefly, and the default 16 MB semi-space lets peak RSS sit ~70 MB
 * above the baseline; at 4 MB it stays under ~50 MB with no measurable throughput cost
 * (test/integration/api/client.memory.test.ts measures it).
 */
import { gridsyncVersion } from '../version.js';
import { disableCoreDumps } from './core-dumps.js';
import { describeForOperator, EXIT_INTERNAL, exitCodeFor } from './exit-codes.js';
import { print, printError } from './print.js';

const COMMANDS: Record<string, { summary: string; load: () => Promise<{ main(argv: string[]): Promise<number> }> }> = {
  run: { summary: 'run until SIGTERM/SIGINT', load: () => import('./run.js') },
  once: { summary: 'one full cycle: drain inbound and outbound, then exit', load: () => import('./once.js') },
  status: { summary: 'journal summary: counts per state, last cycle, recent failures', load: () => import('./status.js') },
  doctor: { summary: 'check config, folders, service reachable, credentials valid', load: () => import('./doctor.js') },
  requeue: { summary: 'put files from errorDir back into the outbox', load: () => import('./requeue.js') },
  redeliver: { summary: 'have the service deliver an inbound parcel again (reset to inbox)', load: () => import('./redeliver.js') },
  callbacks: { summary: "callbacks list|register|remove|test: the service's callback registrations", load: () => import('./callbacks.js') },
  journal: {
    summary: 'journal migrate|set-service: copy the journal between SQLite and PostgreSQL; record a new service address',
    load: () => import('./journal.js'),
  },
  call: { summary: 'one raw REST call through the client; prints data as JSON', load: () => import('./call.js') },
  emulator: { summary: 'the local service (REST v2 emulator)', load: () => import('./emulator.js') },
};

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  return [
    'usage: gridsync <command> [options]',
    '',
    'commands:',
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
    '',
    'gridsync <command> --help for the options of one command; gridsync --version.',
  ].join('\n');
}

async function dispatch(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === '--version' || command === '-V') {
    print(`gridsync ${gridsyncVersion()}\n`);
    return 0;
  }
  if (command === undefined) {
    printError(`gridsync: name a command\n\n${usage()}\n`);
    return 2;
  }
  if (command === '--help' || command === '-h' || command === 'help') {
    print(`${usage()}\n`);
    return 0;
  }
  const entry = COMMANDS[command];
  if (!entry) {
    printError(`gridsync: unknown command '${command}'\n\n${usage()}\n`);
    return 2;
  }
  // Before any command reads a secret.
  disableCoreDumps();
  const mod = await entry.load();
  return mod.main(rest);
}

// A reader that goes away (`gridsync call --list | head`) is not an error of ours: stop quietly.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw err;
  });
}

/** An operator gets the message and its code; the stack only on request, for a bug report. */
function tell(err: unknown): void {
  const detail = process.env.GRIDSYNC_DEBUG && err instanceof Error ? `\n${err.stack ?? ''}` : '';
  printError(`gridsync: ${describeForOperator(err)}${detail}\n`);
}

// A rejection nobody waits on, or a throw from a timer or an event, is a bug of ours wherever it
// happens. Node's default prints the stack and exits 1; it is said as any other failure is, and the
// process exits at once, as a crash would: every journalled step is safe to resume (systemd
// restarts anything but exit 2).
const bug = (err: unknown): void => {
  try {
    tell(err);
  } finally {
    process.exit(exitCodeFor(err) || EXIT_INTERNAL);
  }
};
process.on('unhandledRejection', bug);
process.on('uncaughtException', bug);

dispatch(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    tell(err);
    process.exitCode = exitCodeFor(err);
  },
);
