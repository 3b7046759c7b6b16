/** `gridsync doctor`: checks config, folders, filesystems, journal lock, service and credentials, one line each. */
import fs from 'node:fs';
import path from 'node:path';
import { catalog, GridClient } from '../api/index.js';
import { ConfigError, loadConfig, type Config } from '../config/index.js';
import { checkWritable, sameFilesystem } from '../files/index.js';
import { Journal, JournalLockedError } from '../journal/index.js';
import { parseCommand, runCommand } from './args.js';
import { CONFIG_OPTION } from './common.js';

const USAGE = `usage: gridsync doctor [-c FILE]

Checks the config, the folders (exist, writable, same filesystem where renames must be atomic), the
journal, the service (reachable) and the credentials (valid), one line each (✓ pass, ! note,
✗ fail). Changes nothing. Exit 0 when nothing fails, 2 when a check fails — the same problems make
\`gridsync run\` exit 2.`;

export type CheckResult = { level: 'ok' | 'note' | 'fail'; detail?: string };
interface Check {
  readonly name: string;
  run(): Promise<CheckResult>;
}

const ok = (detail?: string): CheckResult => ({ level: 'ok', ...(detail ? { detail } : {}) });
const fail = (detail: string): CheckResult => ({ level: 'fail', detail });

function nearestExisting(p: string): string {
  let cur = path.resolve(p);
  while (!fs.existsSync(cur) && path.dirname(cur) !== cur) cur = path.dirname(cur);
  return cur;
}

/** A folder gridsync writes to: it exists and is writable, or it can be created (start-up creates it). */
function folderCheck(label: string, dir: string): Check {
  return {
    name: `${label} ${dir}`,
    run: async () => {
      if (fs.existsSync(dir)) {
        await checkWritable(dir);
        return ok();
      }
      const parent = nearestExisting(dir);
      await checkWritable(parent);
      return { level: 'note', detail: `does not exist yet; created at start-up (${parent} is writable)` };
    },
  };
}

function sameFsCheck(label: string, a: string, b: string, why: string): Check {
  return { name: label, run: async () => ((await sameFilesystem(a, b)) ? ok() : fail(`different filesystems: ${why}`)) };
}

export function doctorChecks(cfg: Config): Check[] {
  const checks: Check[] = [folderCheck('stateDir', cfg.stateDir)];
  for (const m of cfg.mailboxes) {
    const label = m.name ?? '';
    if (m.inbox) {
      checks.push(folderCheck(`${label} inbox`, m.inbox.dir));
      const staging = m.inbox.stagingDir ?? path.join(cfg.stateDir, 'staging');
      checks.push(sameFsCheck(`${label} inbox and staging ${staging} on one filesystem`, staging, m.inbox.dir, 'the final rename would not be atomic (set inbox.stagingDir)'));
    }
    if (m.outbox) {
      checks.push(folderCheck(`${label} outbox`, m.outbox.dir));
      checks.push(folderCheck(`${label} errorDir`, m.outbox.errorDir));
      if (m.outbox.sentDir) checks.push(folderCheck(`${label} sentDir`, m.outbox.sentDir));
      const processing = m.outbox.processingDir ?? path.join(cfg.stateDir, 'processing');
      checks.push(sameFsCheck(`${label} outbox and processing ${processing} on one filesystem`, processing, m.outbox.dir, 'the claim would not be atomic (set outbox.processingDir)'));
    }
  }
  const journalFile = path.join(cfg.stateDir, 'journal.sqlite');
  checks.push({
    name: `journal ${journalFile}`,
    run: async () => {
      if (!fs.existsSync(journalFile)) return { level: 'note', detail: 'not created yet (the first run creates it)' };
      try {
        const j = Journal.open(journalFile, { readonly: true });
        j.close();
        Journal.open(journalFile).close();
        return ok();
      } catch (err) {
        if (err instanceof JournalLockedError) return { level: 'note', detail: `in use by a running gridsync (pid ${err.holderPid ?? '?'}) — fine if that is the daemon` };
        return fail((err as Error).message);
      }
    },
  });
  if (cfg.api.baseUrl === 'embedded') {
    checks.push({ name: 'service', run: async () => ok('embedded emulator (started in-process by run and once)') });
  } else {
    checks.push({
      name: `service ${cfg.api.baseUrl} and credentials`,
      run: async () => {
        const client = new GridClient({
          baseUrl: cfg.api.baseUrl,
          auth: cfg.api.apiKey ? { apiKey: cfg.api.apiKey } : { login: cfg.api.login ?? '', password: cfg.api.password ?? '' },
          allowInsecureHttp: cfg.api.allowInsecureHttp,
          timeouts: cfg.api.timeouts,
          maxAttempts: 1,
        });
        try {
          const v = await client.call(catalog.auth.version, {});
          const me = await client.call(catalog.users.me, {});
          return ok(`version ${v.version}, user ${me.login} (mailbox ${me.mailboxId}, ${me.authLevel})`);
        } catch (err) {
          return fail((err as Error).message);
        } finally {
          await client.close();
        }
      },
    });
  }
  return checks;
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
      process.stdout.write(`✗ config: ${err.message}\n`);
      return 2;
    }
    process.stdout.write(`✓ config ${loaded.file}\n`);
    for (const w of loaded.warnings) process.stdout.write(`! ${w}\n`);
    let failed = 0;
    for (const c of doctorChecks(loaded.config)) {
      let r: CheckResult;
      try {
        r = await c.run();
      } catch (err) {
        r = fail((err as Error).message);
      }
      if (r.level === 'fail') failed++;
      const mark = { ok: '✓', note: '!', fail: '✗' }[r.level];
      process.stdout.write(`${mark} ${c.name}${r.detail ? `: ${r.detail}` : ''}\n`);
    }
    return failed === 0 ? 0 : 2;
  });
}
