/** `gridsync doctor`: checks config, folders, filesystems, journal lock, service and credentials, one line each. */
import fs from 'node:fs';
import path from 'node:path';
import { catalog, GridClient } from '../api/index.js';
import { ConfigError, loadConfig } from '../config/index.js';
import { checkWritable, ensureDirDurable, sameFilesystem } from '../files/durable.js';
import { Journal, JournalLockedError } from '../journal/index.js';
import { parseCommand, runCommand } from './args.js';
import { CONFIG_OPTION } from './common.js';

const USAGE = `usage: gridsync doctor [-c FILE]

Checks the config, the folders (exist, writable, same filesystem where renames must be atomic), the
journal, the service (reachable) and the credentials (valid). Exit 0 when all pass, 1 otherwise,
2 when the config itself is invalid.`;

type Check = { name: string; run: () => Promise<string | undefined> };

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
    const cfg = loaded.config;
    process.stdout.write(`✓ config ${loaded.file}\n`);
    const checks: Check[] = [];
    const dirCheck = (label: string, dir: string): Check => ({
      name: `${label} ${dir}`,
      run: async () => {
        if (!fs.existsSync(dir)) return 'does not exist (gridsync creates it at start-up if its parent is writable)';
        await checkWritable(dir);
        return undefined;
      },
    });
    checks.push(dirCheck('stateDir', cfg.stateDir));
    for (const m of cfg.mailboxes) {
      if (m.inbox) {
        checks.push(dirCheck(`${m.name ?? ''} inbox`, m.inbox.dir));
        checks.push({ name: `${m.name ?? ''} inbox and staging on one filesystem`, run: async () => {
          const staging = m.inbox!.stagingDir ?? path.join(cfg.stateDir, 'staging');
          await ensureDirDurable(staging);
          return (await sameFilesystem(staging, m.inbox!.dir)) ? undefined : 'different filesystems: the final rename would not be atomic';
        } });
      }
      if (m.outbox) {
        checks.push(dirCheck(`${m.name ?? ''} outbox`, m.outbox.dir));
        checks.push(dirCheck(`${m.name ?? ''} errorDir`, m.outbox.errorDir));
        if (m.outbox.sentDir) checks.push(dirCheck(`${m.name ?? ''} sentDir`, m.outbox.sentDir));
        checks.push({ name: `${m.name ?? ''} outbox and processing on one filesystem`, run: async () => {
          const processing = m.outbox!.processingDir ?? path.join(cfg.stateDir, 'processing');
          await ensureDirDurable(processing);
          return (await sameFilesystem(processing, m.outbox!.dir)) ? undefined : 'different filesystems: the claim would not be atomic';
        } });
      }
    }
    checks.push({ name: 'journal', run: async () => {
      try {
        Journal.open(path.join(cfg.stateDir, 'journal.sqlite')).close();
        return undefined;
      } catch (err) {
        if (err instanceof JournalLockedError) return `in use by a running gridsync (pid ${err.holderPid ?? '?'}) — fine if that is the daemon`;
        return (err as Error).message;
      }
    } });
    if (cfg.api.baseUrl !== 'embedded') {
      checks.push({ name: `service ${cfg.api.baseUrl} and credentials`, run: async () => {
        const client = new GridClient({
          baseUrl: cfg.api.baseUrl,
          auth: cfg.api.apiKey ? { apiKey: cfg.api.apiKey } : { login: cfg.api.login ?? '', password: cfg.api.password ?? '' },
          allowInsecureHttp: cfg.api.allowInsecureHttp,
          maxAttempts: 1,
        });
        try {
          const v = await client.call(catalog.auth.version, {});
          const me = await client.call(catalog.users.me, {});
          return `ok:version ${v.version}, user ${me.login} (mailbox ${me.mailboxId}, ${me.authLevel})`;
        } catch (err) {
          return (err as Error).message;
        } finally {
          await client.close();
        }
      } });
    }
    let failed = 0;
    for (const c of checks) {
      let problem: string | undefined;
      try {
        problem = await c.run();
      } catch (err) {
        problem = (err as Error).message;
      }
      if (problem === undefined || problem.startsWith('ok:')) process.stdout.write(`✓ ${c.name}${problem ? ` — ${problem.slice(3)}` : ''}\n`);
      else if (problem.includes('fine if that is the daemon')) process.stdout.write(`! ${c.name}: ${problem}\n`);
      else {
        failed++;
        process.stdout.write(`✗ ${c.name}: ${problem}\n`);
      }
    }
    return failed === 0 ? 0 : 1;
  });
}
