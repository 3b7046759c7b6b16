/**
 * `gridsync callbacks list|register|remove|test`: the service's callback registrations of the
 * configured mailboxes, made and checked by hand (`run` registers by itself). `test` has the
 * service call the registration and waits for the call: at a receiver started for the test when
 * the daemon does not run, else through the running daemon's receiver, whose 200 means verified.
 */
import fs from 'node:fs';
import {
  CallbackSetupError,
  CallbackTestError,
  ensureRegistration,
  isOwnUrl,
  isTestCall,
  loadCallbackCredentials,
  planRegistration,
  removeRegistrations,
  restRegistry,
  splitListen,
  startReceiver,
  type CallbackCredentials,
  type CallbackRegistry,
  type Receiver,
} from '../callbacks/index.js';
import type { Config } from '../config/index.js';
import type { GridClient, SoapClient } from '../api/index.js';
import { connectService, restBeside } from '../service/index.js';
import { parseCommand, runCommand, usageProblem, UsageError } from './args.js';
import { CONFIG_OPTION, loadConfigWarning } from './common.js';
import { print, printError, serviceRefusal } from './print.js';

const USAGE = `usage: gridsync callbacks list|register|remove|test [-c FILE]

  list      the service's callback registrations of each inbound mailbox (ours marked)
  register  make sure exactly one registration of ours exists per mailbox (as run does)
  remove    remove our registrations (others are left alone)
  test      have the service call ours and wait for the call to arrive

Needs the callbacks section; registers over REST (with api.protocol soap too). Exit 0 ok · 1 a mailbox failed · 2 usage or config.`;

/** How long `test` waits for the service's call to arrive. */
const TEST_WAIT_MS = 10_000;

type Action = (ctx: Context, mailboxId: number) => Promise<string>;

interface Context {
  readonly registry: CallbackRegistry;
  readonly creds: CallbackCredentials;
  readonly cfg: NonNullable<Config['callbacks']>;
  /** Test calls that arrive at our own receiver, by mailbox. */
  readonly arrivals: Map<number, () => void>;
  /** Whether `test` runs its own receiver (else the daemon's answers the call). */
  readonly ownReceiver: boolean;
}

const ACTIONS: Record<string, Action> = {
  list: async (ctx, id) => {
    const secret = ctx.creds.pathSecrets.get(id) ?? '';
    const rows = await ctx.registry.list(id);
    if (!rows.length) return 'no registrations';
    return rows
      .map((r) => `\n  ${r.callbackId}  ${r.event}  ${isOwnUrl(r.url, id, secret) ? 'ours ' : 'other'}  ${redact(r.url, secret)}`)
      .join('');
  },
  register: async (ctx, id) => {
    const r = await ensureRegistration(ctx.registry, ctx.creds, ctx.cfg.publicUrl, id);
    return `callback ${r.callbackId} ${r.action}${r.removed.length ? `; removed duplicates ${r.removed.join(', ')}` : ''}`;
  },
  remove: async (ctx, id) => {
    const removed = await removeRegistrations(ctx.registry, ctx.creds, id);
    return removed.length ? `removed ${removed.join(', ')}` : 'none of ours';
  },
  test: async (ctx, id) => {
    const own = planRegistration(await ctx.registry.list(id), id, ctx.creds.pathSecrets.get(id) ?? '').keep;
    if (!own) throw new CallbackSetupError('not registered: gridsync callbacks register');
    const arrived = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), TEST_WAIT_MS);
      ctx.arrivals.set(id, () => (clearTimeout(timer), resolve(true)));
    });
    const r = await ctx.registry.test(own.callbackId);
    if (r.httpStatus !== 200)
      throw new CallbackTestError(`the service's call got HTTP ${r.httpStatus || 'no answer'} (${(r.responseBody ?? '').slice(0, 200)})`);
    if (!ctx.ownReceiver) return `callback ${own.callbackId}: the running daemon's receiver verified the call (HTTP 200)`;
    if (!(await arrived)) throw new CallbackTestError(`the service reports HTTP 200 but no call arrived within ${TEST_WAIT_MS / 1000} s`);
    return `callback ${own.callbackId}: the call arrived and was verified`;
  },
};

const redact = (url: string, secret: string): string => (secret ? url.replace(secret, '<secret>') : url);

/** A receiver for `test` when the daemon's is not running (the listen address is free). */
async function testReceiver(
  cfg: NonNullable<Config['callbacks']>,
  creds: CallbackCredentials,
  arrivals: Map<number, () => void>,
): Promise<Receiver | undefined> {
  const { host, port } = splitListen(cfg.listen);
  const tls = cfg.tls ? { cert: fs.readFileSync(cfg.tls.certFile), key: fs.readFileSync(cfg.tls.keyFile) } : undefined;
  try {
    return await startReceiver({
      host,
      port,
      tls,
      credentials: creds,
      onCall: (id, body) => {
        if (isTestCall(body)) arrivals.get(id)?.();
      },
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') return undefined;
    throw err;
  }
}

export async function main(argv: string[]): Promise<number> {
  return runCommand(async () => {
    const args = parseCommand(argv, USAGE, CONFIG_OPTION, true);
    if (!args) return 0;
    const [verb, ...extra] = args.positionals;
    const verbs = Object.keys(ACTIONS);
    const choices = `${verbs.slice(0, -1).join(', ')} or ${verbs.at(-1) ?? ''}`;
    if (verb === undefined) throw usageProblem(`name an action: ${choices}`, USAGE);
    // Not ACTIONS[verb] alone: `toString` would find Object's own.
    const action = verbs.includes(verb) ? ACTIONS[verb] : undefined;
    if (!action) throw usageProblem(`unknown action ${verb}: ${choices}`, USAGE);
    if (extra.length) throw usageProblem(`unexpected argument ${extra.join(' ')}`, USAGE);
    const cfg = loadConfigWarning(args.values.config).config;
    if (!cfg.callbacks) throw new UsageError('the config has no callbacks section (docs/callbacks.md)');
    const service = await connectService(cfg);
    let rest: GridClient | undefined;
    try {
      // Over SOAP, through REST with the same account: SOAP publishes no callback operations.
      rest = service.rest ?? restBeside(cfg, service.soap as SoapClient, cfg.callbacks.restUrl);
      const client = rest;
      const ids = await Promise.all(
        cfg.mailboxes
          .filter((m) => m.inbox)
          .map(async (m) => {
            const id = m.mailboxId ?? (await client.sessionContext()).mailboxId;
            if (id === undefined) throw new UsageError('the service names no mailbox for the credential: set mailboxes[].mailboxId');
            return id;
          }),
      );
      const creds = loadCallbackCredentials({
        stateDir: cfg.stateDir,
        auth: cfg.callbacks.auth,
        username: cfg.callbacks.username,
        passwordFile: cfg.callbacks.passwordFile,
        credentialsDir: process.env.CREDENTIALS_DIRECTORY,
        mailboxIds: ids,
      });
      const arrivals = new Map<number, () => void>();
      const receiver = verb === 'test' ? await testReceiver(cfg.callbacks, creds, arrivals) : undefined;
      const ctx: Context = { registry: restRegistry(client), creds, cfg: cfg.callbacks, arrivals, ownReceiver: receiver !== undefined };
      let failed = 0;
      try {
        for (const id of ids) {
          try {
            print(`mailbox ${id}: ${await action(ctx, id)}\n`);
          } catch (err) {
            failed++;
            printError(`mailbox ${id}: ${serviceRefusal(err)}\n`);
          }
        }
      } finally {
        await receiver?.close();
      }
      return failed ? 1 : 0;
    } finally {
      if (rest !== service.rest) await rest?.close();
      await service.close();
    }
  });
}
