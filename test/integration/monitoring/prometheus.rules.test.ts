// The monitoring that ships in deploy/: Prometheus's own promtool checks the alert rules and runs
// their unit tests (each alert fires on the series that should raise it, and only then); a real
// daemon is scraped and every metric the rules and the Grafana dashboard use must be in the scrape,
// which must pass `promtool check metrics`. promtool comes from Debian's `prometheus` package: the
// test installs it when missing and it can (root, apt-get), else skips with a printed notice.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/index.js';
import { Daemon } from '../../../src/daemon/index.js';
import { silentLogger } from '../../../src/log.js';
import { repoRoot } from '../../helpers/journal-child.js';
import { prerequisite } from '../../helpers/require-tool.js';

const deploy = path.join(repoRoot, 'deploy');

function findPromtool(): string | undefined {
  const has = (): boolean => spawnSync('promtool', ['--version']).status === 0;
  if (has()) return 'promtool';
  if (process.getuid?.() === 0 && spawnSync('apt-get', ['--version']).status === 0) {
    const r = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'prometheus'], {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      encoding: 'utf8',
      timeout: 600_000,
    });
    if (r.status === 0 && has()) return 'promtool';
  }
  return undefined;
}

const promtool = prerequisite(
  "promtool (Debian's prometheus package)",
  findPromtool() !== undefined,
  'the alert rules and the scraped metrics are not checked',
)
  ? 'promtool'
  : undefined;

const metricNames = (text: string): Set<string> =>
  new Set([...text.matchAll(/\b(gridsync_[a-z_]+)\b/g)].map((m) => (m[1] as string).replace(/_(bucket|sum|count)$/, '')));

describe.skipIf(!promtool)('Prometheus rules and a scraped daemon', () => {
  let daemon: Daemon;
  let dir: string;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-prom-'));
    const loaded = parseConfig(
      {
        api: { baseUrl: 'embedded', apiKey: 'demo-key-1001' },
        stateDir: 'state',
        http: { enabled: true, port: 0 },
        schedule: { poll: '200ms' },
        mailboxes: [
          { mailboxId: 1001, inbox: { dir: 'inbox' }, outbox: { dir: 'outbox', sentDir: 'sent', errorDir: 'error', stableMs: 0 } },
        ],
      },
      'prometheus-test',
      {},
      dir,
    );
    daemon = await Daemon.open({ loaded, logger: silentLogger, waitForService: true, serveHttp: true });
    await daemon.start();
    // A rejected file makes the failure counter appear with its labels.
    fs.writeFileSync(path.join(dir, 'outbox', 'bad.x12'), 'not an interchange');
    for (let i = 0; i < 100 && !fs.existsSync(path.join(dir, 'error', 'bad.x12')); i++) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 600));
  });
  afterAll(async () => {
    await daemon?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('promtool check rules and promtool test rules pass', () => {
    const check = spawnSync(promtool as string, ['check', 'rules', 'alerts.yml'], {
      cwd: path.join(deploy, 'prometheus'),
      encoding: 'utf8',
    });
    expect(check.stdout + check.stderr).toMatch(/SUCCESS: 6 rules found/);
    expect(check.status).toBe(0);
    const test = spawnSync(promtool as string, ['test', 'rules', 'alerts.test.yml'], {
      cwd: path.join(deploy, 'prometheus'),
      encoding: 'utf8',
    });
    expect(test.stdout + test.stderr).toMatch(/SUCCESS/);
    expect(test.status).toBe(0);
  });

  it('the scrape of a running daemon passes promtool check metrics and has every metric the rules and the dashboard use', async () => {
    const scrape = await (await fetch(`${daemon.httpUrl as string}/metrics`)).text();
    const lint = spawnSync(promtool as string, ['check', 'metrics'], { input: scrape, encoding: 'utf8' });
    // prom-client's default Node metrics carry lint findings of their own (gauges named *_total);
    // ours must have none.
    const findings = (lint.stdout + lint.stderr).split('\n').filter((l) => l.trim() && !/^gridsync_nodejs_/.test(l));
    expect(findings).toEqual([]);
    const have = metricNames(scrape);
    const rules = metricNames(fs.readFileSync(path.join(deploy, 'prometheus', 'alerts.yml'), 'utf8'));
    const dashboard = metricNames(fs.readFileSync(path.join(deploy, 'grafana', 'gridsync-dashboard.json'), 'utf8'));
    expect(rules.size).toBeGreaterThanOrEqual(5);
    expect([...rules].filter((m) => !have.has(m))).toEqual([]);
    expect([...dashboard].filter((m) => !have.has(m))).toEqual([]);
    expect(scrape).toMatch(/gridsync_failures_total\{direction="out",mailbox="mb1001",kind="rejected"\} 1/);
    expect(scrape).toMatch(/gridsync_folder_free_bytes\{mailbox="mb1001",folder="inbox"\} \d+/);
  });
});
