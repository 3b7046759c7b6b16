/**
 * `gridsync doctor`: checks config, folders (owner, mode, writable, filesystems), the journal, the
 * http port, the service, the credentials and every mailbox, one line each. Bounded in time: a
 * service that accepts connections and never answers costs at most DOCTOR_SERVICE_BUDGET_MS, and
 * once a check waits longer than DOCTOR_WAIT_NOTICE_MS doctor says what for.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { catalog, GridApiError, type GridClient } from '../api/index.js';
import { connectService, type ServiceOptions } from '../service/index.js';
import { CallbackSetupError, checkCallbackCredentials } from '../callbacks/index.js';
import { accountName, ConfigError, loadConfig, type Config } from '../config/index.js';
import { DOCTOR_CALL_TIMEOUT_MS, DOCTOR_SERVICE_BUDGET_MS, DOCTOR_WAIT_NOTICE_MS } from '../config/defaults.js';
import { redactUrl, workDirOf } from '../config/index.js';
import { checkWritable, sameFilesystem } from '../files/index.js';
import { isPostgresUrl, Journal, JournalLockedError, sqliteJournalPath } from '../journal/index.js';
import { PREFLIGHT_CHECKS, serviceIdentity } from '../daemon/index.js';
import { postgresJournalChecks, SERVICE_CHECK_NAME, serviceVerdict, type ConfiguredService } from './doctor-journal.js';
import { output, parseCommand, runCommand } from './args.js';
import { CONFIG_OPTION } from './common.js';
import { print, printError } from './print.js';

const USAGE = `usage: gridsync doctor [-c FILE]

Checks the config and its secret files, the folders (owner, mode, writable, same filesystem where
renames must be atomic), the journal, the http port, the service (reachable within ${DOCTOR_SERVICE_BUDGET_MS / 1000} s), the
credentials and every configured mailbox (reachable with the key), one line each (✓ pass, ! note,
✗ fail). Changes nothing. Exit 0 when nothing fails, 2 when a check fails — the same problems make
\`gridsync run\` exit 2.`;

export type CheckResult = { level: 'ok' | 'note' | 'fail'; detail?: string };
interface Check {
  readonly name: string;
  /** What the check waits for, shown while it runs (network checks). */
  readonly waitsFor?: () => string | undefined;
  run(): Promise<CheckResult>;
}

const ok = (detail?: string): CheckResult => ({ level: 'ok', ...(detail ? { detail } : {}) });
const note = (detail: string): CheckResult => ({ level: 'note', detail });
const fail = (detail: string): CheckResult => ({ level: 'fail', detail });

function nearestExisting(p: string): string {
  let cur = path.resolve(p);
  while (!fs.existsSync(cur) && path.dirname(cur) !== cur) cur = path.dirname(cur);
  return cur;
}

/** `gridsync:edi 2770` — who owns a folder and its mode, as an operator would check with ls -ld. */
export function ownerAndMode(st: fs.Stats): string {
  return `${accountName('passwd', st.uid) ?? st.uid}:${accountName('group', st.gid) ?? st.gid} ${(st.mode & 0o7777).toString(8).padStart(4, '0')}`;
}

/**
 * A folder gridsync writes to: it exists and is writable, or it can be created (start-up creates
 * it unless createDirs is false — then run and once refuse to start, and so does this check).
 */
function folderCheck(label: string, dir: string, createDirs: boolean): Check {
  return {
    name: `${label} ${dir}`,
    run: async () => {
      if (fs.existsSync(dir)) {
        await checkWritable(dir);
        const st = fs.statSync(dir);
        const who = ownerAndMode(st);
        if (st.mode & 0o002 && !(st.mode & 0o1000))
          return note(
            `${who}: writable by every user — anyone can drop or replace files here; chmod o-w (share with the ERP through a group)`,
          );
        const me = process.geteuid?.();
        if (me !== undefined && me !== 0 && st.uid !== me) return ok(`${who} (writable through the group)`);
        return ok(who);
      }
      if (!createDirs) return fail('does not exist, and createDirs is false: run and once refuse to start (an unmounted share?)');
      const parent = nearestExisting(dir);
      await checkWritable(parent);
      return note(`does not exist yet; created at start-up (${parent} is writable)`);
    },
  };
}

function sameFsCheck(label: string, a: string, b: string, why: string): Check {
  return { name: label, run: async () => ((await sameFilesystem(a, b)) ? ok() : fail(`different filesystems: ${why}`)) };
}

/** Is the journal held by a running gridsync (then a taken http port is most likely that one)? */
function journalHolder(stateDir: string): number | undefined | false {
  const file = path.join(stateDir, 'journal.sqlite');
  if (!fs.existsSync(file)) return false;
  try {
    // Nothing was written: close() is done before it returns.
    void Journal.open(file).close();
    return false;
  } catch (err) {
    if (err instanceof JournalLockedError) return err.holderPid ?? undefined;
    return false;
  }
}

function httpPortCheck(cfg: Config): Check {
  const { host, port } = cfg.http;
  return {
    name: `http port ${host}:${port}`,
    run: () =>
      new Promise<CheckResult>((resolve) => {
        const server = net.createServer();
        server.once('error', (err: NodeJS.ErrnoException) => {
          if (err.code === 'EADDRINUSE') {
            const holder = journalHolder(cfg.stateDir);
            if (holder !== false) resolve(note(`in use — by the running gridsync (pid ${holder ?? '?'}), presumably`));
            else resolve(fail(`in use by another program (see: ss -ltnp 'sport = :${port}'); choose another http.port`));
          } else if (err.code === 'EACCES')
            resolve(fail(`not allowed to listen on port ${port} (below 1024 needs privileges); choose a port above 1023`));
          else if (err.code === 'EADDRNOTAVAIL') resolve(fail(`${host} is not an address of this host (http.host)`));
          else resolve(fail(`cannot listen: ${err.message}`));
        });
        server.listen(port, host, () => server.close(() => resolve(ok('free'))));
      }),
  };
}

/**
 * With callbacks: what the running daemon's receiver heard, from its /readyz — calls that never
 * arrive (a firewall, a proxy) show here, not only in the alert.
 */
/** The callback credentials as `run` reads them at start-up (a refusal there is a failure here). */
function callbackCredentialsCheck(cfg: Config, callbacks: NonNullable<Config['callbacks']>): Check {
  return {
    name: 'callback credentials',
    run: async () => {
      try {
        checkCallbackCredentials({
          stateDir: cfg.stateDir,
          username: callbacks.username,
          passwordFile: callbacks.passwordFile,
          credentialsDir: process.env.CREDENTIALS_DIRECTORY,
        });
        return ok(callbacks.passwordFile ? `password from ${callbacks.passwordFile}` : 'generated and kept in stateDir');
      } catch (err) {
        if (err instanceof CallbackSetupError) return fail(`${err.message} [${err.code}]`);
        return fail((err as Error).message);
      }
    },
  };
}

function callbacksCheck(cfg: Config, publicUrl: string): Check {
  const untested = 'gridsync callbacks test checks the whole path';
  return {
    name: `callbacks ${publicUrl}`,
    run: async () => {
      if (!cfg.http.enabled) return note(`http.enabled is off, so the daemon cannot be asked; ${untested}`);
      let body: { callbacks?: { warning: string | null; calls: number; missed: number } };
      try {
        const res = await fetch(`http://${cfg.http.host}:${cfg.http.port}/readyz`, { signal: AbortSignal.timeout(DOCTOR_CALL_TIMEOUT_MS) });
        body = (await res.json()) as typeof body;
      } catch {
        return note(`the daemon does not answer on http port ${cfg.http.port}; ${untested}`);
      }
      if (!body.callbacks) return note('the running daemon has no callback receiver: restart it to apply the callbacks section');
      if (body.callbacks.warning) return note(body.callbacks.warning);
      return ok(`${body.callbacks.calls} calls received, ${body.callbacks.missed} parcels missed`);
    },
  };
}

/** Runs `fn` with an abort after `ms`; the error says how long it waited for what. */
async function bounded<T>(ms: number, what: string, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ac = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      ac.abort();
      reject(
        new Error(
          `no answer within ${Math.round(ms / 1000)} s while waiting for ${what} (the service accepts connections but does not respond?)`,
        ),
      );
    }, ms);
  });
  try {
    return await Promise.race([fn(ac.signal), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function serviceChecks(cfg: Config): { checks: Check[]; close(): Promise<void> } {
  const shown = redactUrl(cfg.api.baseUrl);
  const clean = (msg: string): string =>
    msg
      .split(cfg.api.baseUrl)
      .join(shown)
      .replace(/\/\/([^/@\s:]*):(?!\*\*\*@)[^/@\s]*@/g, '//$1:***@');
  let client: Promise<ServiceProbe> | undefined;
  let budgetEnd = 0;
  let me: { mailboxId: number } | undefined;
  let gaveUp: string | undefined;
  const remaining = (): number => Math.max(0, budgetEnd - Date.now());
  const op =
    cfg.api.protocol === 'soap'
      ? { version: 'SOAP Version', me: 'SOAP WhoAmI', mailbox: (id: number) => `SOAP ParcelInBoxEx (mailbox ${id})` }
      : { version: 'GET /v2/version', me: 'GET /v2/users/me', mailbox: (id: number) => `GET /v2/mailboxes/${id}` };
  const call = async <T>(what: string, fn: (c: ServiceProbe, signal: AbortSignal) => Promise<T>): Promise<T> => {
    if (!client) {
      budgetEnd = Date.now() + DOCTOR_SERVICE_BUDGET_MS;
      client = serviceProbe(cfg, {
        timeouts: {
          connectMs: Math.min(cfg.api.timeouts.connectMs, DOCTOR_CALL_TIMEOUT_MS),
          headersMs: DOCTOR_CALL_TIMEOUT_MS,
          bodyMs: DOCTOR_CALL_TIMEOUT_MS,
        },
        maxAttempts: 1,
      });
    }
    const c = await client;
    return bounded(Math.min(DOCTOR_CALL_TIMEOUT_MS, remaining()), `${shown} (${what})`, (signal) => fn(c, signal));
  };
  const guarded = (name: string, waitsFor: string, body: () => Promise<CheckResult>): Check => ({
    name,
    waitsFor: () => (gaveUp ? undefined : waitsFor),
    run: async () => {
      if (gaveUp) return fail(`not checked: ${gaveUp}`);
      try {
        return await body();
      } catch (err) {
        const msg = clean((err as Error).message);
        if (!(err instanceof GridApiError)) gaveUp = 'the service did not answer above';
        return fail(msg);
      }
    },
  });
  const checks: Check[] = [
    guarded(`service ${shown}`, `${shown}: ${op.version}`, async () => {
      const v = await call(op.version, (c, signal) => c.version(signal));
      return ok(`answers, version ${v}`);
    }),
    guarded('credentials', `${shown}: ${op.me}`, async () => {
      const u = await call(op.me, (c, signal) => c.me(signal));
      me = u;
      return ok(`user ${u.login} (mailbox ${u.mailboxId}, ${u.authLevel})`);
    }),
  ];
  cfg.mailboxes.forEach((m, i) => {
    if (m.mailboxId === undefined) return;
    const id = m.mailboxId;
    checks.push(
      guarded(`mailboxes[${i}] ${m.name ?? id}: mailbox ${id} reachable with the key`, `${shown}: ${op.mailbox(id)}`, async () => {
        if (me && me.mailboxId === id) return ok("the key user's own mailbox");
        try {
          await call(op.mailbox(id), (c, signal) => c.mailbox(id, signal));
          return ok();
        } catch (err) {
          if (err instanceof GridApiError && (err.httpStatus === 403 || err.httpStatus === 404)) {
            return fail(
              `the key cannot reach mailbox ${id} (${err.errorCode ?? err.httpStatus}); run and once would refuse to start — check mailboxId or the key`,
            );
          }
          throw err;
        }
      }),
    );
  });
  return { checks, close: async () => (await client)?.close() };
}

export function doctorChecks(cfg: Config, configFile: string): { checks: Check[]; close(): Promise<void> } {
  // The refusals run and once decide before opening anything, by the same code.
  const checks: Check[] = PREFLIGHT_CHECKS.map((p) => ({
    name: p.name,
    run: async () => {
      const refusal = p.refusal(cfg);
      return refusal ? fail(refusal.message) : ok();
    },
  }));
  const folder = (label: string, dir: string): Check => folderCheck(label, dir, cfg.createDirs);
  // A work folder must share its folder's filesystem: the step that leaves it is a rename.
  const workDirCheck = (
    side: string,
    kind: 'staging' | 'processing',
    dir: string,
    configured: string | undefined,
    step: string,
    key: string,
  ): Check => {
    const work = workDirOf(cfg, kind, dir, configured);
    return sameFsCheck(`${side} and ${kind} ${work} on one filesystem`, work, dir, `${step} would not be atomic (set ${key})`);
  };
  checks.push(folder('stateDir', cfg.stateDir));
  for (const m of cfg.mailboxes) {
    const label = m.name ?? '';
    if (m.inbox) {
      checks.push(folder(`${label} inbox`, m.inbox.dir));
      checks.push(workDirCheck(`${label} inbox`, 'staging', m.inbox.dir, m.inbox.stagingDir, 'the final rename', 'inbox.stagingDir'));
    }
    if (m.outbox) {
      checks.push(folder(`${label} outbox`, m.outbox.dir));
      checks.push(folder(`${label} errorDir`, m.outbox.errorDir));
      if (m.outbox.sentDir) checks.push(folder(`${label} sentDir`, m.outbox.sentDir));
      checks.push(workDirCheck(`${label} outbox`, 'processing', m.outbox.dir, m.outbox.processingDir, 'the claim', 'outbox.processingDir'));
    }
  }
  const closers: (() => Promise<void>)[] = [];
  const service = { service: serviceIdentity(cfg.api.baseUrl), configFile: path.resolve(configFile) };
  if (isPostgresUrl(cfg.journal.url)) {
    const pgChecks = postgresJournalChecks(cfg.journal.url, redactUrl(cfg.journal.url), service);
    checks.push(...pgChecks.checks);
    closers.push(pgChecks.close);
  } else checks.push(sqliteJournalCheck(cfg.stateDir), sqliteServiceCheck(cfg.stateDir, service));
  if (cfg.http.enabled) checks.push(httpPortCheck(cfg));
  if (cfg.callbacks) checks.push(callbackCredentialsCheck(cfg, cfg.callbacks), callbacksCheck(cfg, cfg.callbacks.publicUrl));
  if (cfg.api.baseUrl === 'embedded') {
    checks.push({ name: 'service', run: async () => ok('embedded emulator (started in-process by run and once)') });
  } else {
    const service = serviceChecks(cfg);
    checks.push(...service.checks);
    closers.push(service.close);
  }
  return { checks, close: async () => void (await Promise.all(closers.map((c) => c()))) };
}

function sqliteJournalCheck(stateDir: string): Check {
  const journalFile = path.join(stateDir, 'journal.sqlite');
  return {
    name: `journal ${journalFile}`,
    run: async () => {
      if (!fs.existsSync(journalFile)) return note('not created yet (the first run creates it)');
      try {
        await Journal.open(journalFile, { readonly: true }).close();
        await Journal.open(journalFile).close();
        return ok(ownerAndMode(fs.statSync(journalFile)));
      } catch (err) {
        if (err instanceof JournalLockedError)
          return note(`in use by a running gridsync (pid ${err.holderPid ?? '?'}) — fine if that is the daemon`);
        return fail((err as Error).message);
      }
    },
  };
}

function sqliteServiceCheck(stateDir: string, configured: ConfiguredService): Check {
  return {
    name: SERVICE_CHECK_NAME,
    run: async () => {
      const file = sqliteJournalPath(stateDir);
      if (!fs.existsSync(file)) return serviceVerdict(undefined, configured);
      const journal = Journal.open(file, { readonly: true });
      try {
        return await serviceVerdict(journal, configured);
      } finally {
        await journal.close();
      }
    },
  };
}

export async function main(argv: string[]): Promise<number> {
  return runCommand(async () => {
    const args = parseCommand(argv, USAGE, CONFIG_OPTION);
    if (!args) return 0;
    let loaded;
    try {
      loaded = loadConfig(args.values.config);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      print(`✗ config: ${err.message}\n`);
      return 2;
    }
    if (!output.quiet) print(`✓ config ${loaded.file}\n`);
    for (const w of loaded.warnings) print(`! ${w}\n`);
    if (!output.quiet) print(`✓ secret from ${loaded.secretSource}\n`);
    // Root can read and write what the service user cannot: its ✓ would not hold for the daemon.
    if (process.geteuid?.() === 0)
      print(
        '! running as root: the folder, journal and key checks answer for root, not for the service user — run doctor as that user (the install guide shows how: systemd-run … -p User=gridsync)\n',
      );
    const tty = process.stderr.isTTY === true;
    let failed = 0;
    const { checks, close } = doctorChecks(loaded.config, loaded.file);
    for (const c of checks) {
      // Say what we wait for once a network check is slow to answer: on a terminal as a line that
      // the result replaces, otherwise as its own line on stderr. A prompt answer says nothing.
      const waitsFor = c.waitsFor?.();
      let noticed = false;
      const notice = waitsFor
        ? setTimeout(() => {
            noticed = true;
            printError(tty ? `… waiting for ${waitsFor}` : `… waiting for ${waitsFor}${os.EOL}`);
          }, DOCTOR_WAIT_NOTICE_MS)
        : undefined;
      let r: CheckResult;
      try {
        r = await c.run();
      } catch (err) {
        r = fail((err as Error).message);
      } finally {
        clearTimeout(notice);
      }
      if (noticed && tty) process.stderr.write('\r\x1b[K');
      if (r.level === 'fail') failed++;
      if (output.quiet && r.level === 'ok') continue;
      const mark = { ok: '✓', note: '!', fail: '✗' }[r.level];
      print(`${mark} ${c.name}${r.detail ? `: ${r.detail}` : ''}\n`);
    }
    await close();
    return failed === 0 ? 0 : 2;
  });
}

/** The three questions doctor asks the service, over the configured interface. */
interface ServiceProbe {
  version(signal: AbortSignal): Promise<string>;
  me(signal: AbortSignal): Promise<{ login: string; mailboxId: number; authLevel: string }>;
  mailbox(mailboxId: number, signal: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

async function serviceProbe(cfg: Config, options: ServiceOptions): Promise<ServiceProbe> {
  const service = await connectService(cfg, options);
  const soap = service.soap;
  if (soap) {
    return {
      version: async (signal) => String(await soap.call('Version', {}, { signal })),
      me: async (signal) => {
        const s = (await soap.call('WhoAmI', {}, { signal })) as { LoginName?: string; MailboxID: number; AuthLevel: string };
        return { login: s.LoginName ?? '', mailboxId: s.MailboxID, authLevel: s.AuthLevel };
      },
      // Listing the mailbox's inbox is the access check the SOAP interface offers (as the daemon does).
      mailbox: async (mailboxId, signal) => void (await soap.pendingInbox(mailboxId, { signal })),
      close: () => service.close(),
    };
  }
  const c = service.rest as GridClient;
  return {
    version: async (signal) => (await c.call(catalog.auth.version, {}, { signal })).version,
    me: async (signal) => c.call(catalog.users.me, {}, { signal }),
    mailbox: async (mailboxId, signal) => void (await c.call(catalog.mailboxes.get, { mailboxId }, { signal })),
    close: () => service.close(),
  };
}
