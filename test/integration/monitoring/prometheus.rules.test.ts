// The monitoring that ships in deploy/: Prometheus's own promtool checks the alert rules and runs
// their unit tests; then the built daemon is started as a child process and scraped, the scrape
// must pass `promtool check metrics`, carry every metric the rules and the dashboard use, and the
// rules are evaluated on the series exactly as the daemon exports them (the fixture is the
// scrape, not a hand-written guess). promtool comes from Debian's `prometheus` package: the test
// installs it when missing and it can (root, apt-get), else skips with a printed notice.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { eventually, startCli, type CliChild } from '../../helpers/daemon-child.js';
import { makeDaemonWorld, type DaemonWorld } from '../../helpers/daemon-config.js';
import { repoRoot } from '../../helpers/journal-child.js';
import { prerequisite } from '../../helpers/require-tool.js';

const deploy = path.join(repoRoot, 'deploy');
const alertsFile = path.join(deploy, 'prometheus', 'alerts.yml');

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
  new Set(
    [...text.matchAll(/\b((?:gridsync|process|nodejs)_[a-z_]+)\b/g)].map((m) => (m[1] as string).replace(/_(bucket|sum|count)$/, '')),
  );

interface Sample {
  readonly name: string;
  readonly labels: string;
  readonly value: number;
}

/** The samples of an exposition text (comments and histogram parts left out). */
function samples(scrape: string): Sample[] {
  return scrape
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => /^([a-z_]+)(\{[^}]*\})? (\S+)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null && !/_(bucket|sum|count)$/.test(m[1] as string))
    .map((m) => ({ name: m[1] as string, labels: (m[2] ?? '{}').slice(1, -1), value: Number(m[3]) }));
}

const children: CliChild[] = [];
const worlds: DaemonWorld[] = [];
afterAll(async () => {
  for (const c of children) {
    c.kill('SIGTERM');
    await c.exited;
  }
  for (const w of worlds) w.cleanup();
});

/** Starts `gridsync run` with /metrics on a free port; resolves with its scrape once `settled` holds. */
async function scrapeDaemon(extra: Record<string, unknown>, settled: RegExp, mailboxExtra: Record<string, unknown> = {}): Promise<string> {
  const w = makeDaemonWorld({ http: { enabled: true, port: 0 }, log: { level: 'info', pretty: false }, ...extra }, mailboxExtra);
  worlds.push(w);
  const child = startCli(['run', '-c', w.configFile], {}, w.dir);
  children.push(child);
  const listening = await child.waitFor(/"url":"(http:[^"]+)"[^\n]*health and metrics endpoint listening/, 30_000);
  await child.waitFor(settled, 30_000);
  const url = listening[1] as string;
  return eventually(async () => {
    const text = await (await fetch(`${url}/metrics`)).text();
    return text.includes('gridsync_folder_free_bytes{mailbox=') ? text : undefined;
  });
}

/** A promtool test whose input is every scraped series, held at its scraped value, with `vary` overriding some. */
function seriesFrom(scrape: string, minutes: number, vary: (s: Sample) => string | undefined): { series: string; values: string }[] {
  const target = 'job="gridsync",instance="h:9464"';
  return [
    { series: `up{${target}}`, values: `1x${minutes}` },
    ...samples(scrape).map((s) => ({
      series: `${s.name}{${[target, s.labels].filter(Boolean).join(',')}}`,
      values: vary(s) ?? `${s.value}x${minutes}`,
    })),
  ];
}

/** Runs each alert rule's expression on `input` at `at`; returns the label sets it yields per alert. */
function evaluateRules(
  input: { series: string; values: string }[],
  at: string,
  expect: Record<string, string[]>,
): { status: number | null; out: string } {
  const rules =
    (YAML.parse(fs.readFileSync(alertsFile, 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] }).groups[0]?.rules ?? [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-promtool-'));
  const file = path.join(dir, 'scrape.test.yml');
  fs.writeFileSync(
    file,
    YAML.stringify({
      rule_files: [alertsFile],
      evaluation_interval: '1m',
      tests: [
        {
          interval: '1m',
          input_series: input,
          promql_expr_test: rules.map((r) => ({
            expr: `count by (mailbox, direction, kind) (${r.expr})`,
            eval_time: at,
            exp_samples: (expect[r.alert] ?? []).map((labels) => ({ labels: `{${labels}}`, value: 1 })),
          })),
        },
      ],
    }),
  );
  const r = spawnSync(promtool as string, ['test', 'rules', file], { encoding: 'utf8' });
  fs.rmSync(dir, { recursive: true, force: true });
  return { status: r.status, out: r.stdout + r.stderr };
}

interface Target {
  readonly expr: string;
  readonly legendFormat?: string;
}
interface Panel {
  readonly title?: string;
  readonly targets?: Target[];
  readonly panels?: Panel[];
}
const dashboardFile = path.join(deploy, 'grafana', 'gridsync-dashboard.json');
const dashboardTargets = (list: Panel[]): (Target & { readonly title: string })[] =>
  list.flatMap((p) => [...(p.targets ?? []).map((t) => ({ ...t, title: p.title ?? '?' })), ...dashboardTargets(p.panels ?? [])]);

/** Runs `expr` (a dashboard query, every instance selected) on `input` at `at`; passes when it yields exactly `exp`. */
function evaluateQuery(
  input: { series: string; values: string }[],
  expr: string,
  at: string,
  exp: { labels: string; value: number }[],
): { status: number | null; out: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-promtool-'));
  const file = path.join(dir, 'dashboard.test.yml');
  fs.writeFileSync(
    file,
    YAML.stringify({
      evaluation_interval: '1m',
      tests: [
        {
          interval: '1m',
          input_series: input,
          promql_expr_test: [{ expr: expr.replaceAll('$instance', '.+'), eval_time: at, exp_samples: exp }],
        },
      ],
    }),
  );
  const r = spawnSync(promtool as string, ['test', 'rules', file], { encoding: 'utf8' });
  fs.rmSync(dir, { recursive: true, force: true });
  return { status: r.status, out: r.stdout + r.stderr };
}

describe.skipIf(!promtool)('Prometheus rules and a scraped daemon', () => {
  it('promtool check rules and promtool test rules pass', () => {
    const check = spawnSync(promtool as string, ['check', 'rules', 'alerts.yml'], {
      cwd: path.join(deploy, 'prometheus'),
      encoding: 'utf8',
    });
    // Every rule of the file, none skipped: the count is the file's own.
    const rules = (YAML.parse(fs.readFileSync(alertsFile, 'utf8')) as { groups: { rules: unknown[] }[] }).groups.flatMap((g) => g.rules);
    expect(check.stdout + check.stderr).toMatch(new RegExp(`SUCCESS: ${rules.length} rules found`));
    expect(check.status).toBe(0);
    const test = spawnSync(promtool as string, ['test', 'rules', 'alerts.test.yml'], {
      cwd: path.join(deploy, 'prometheus'),
      encoding: 'utf8',
    });
    expect(test.stdout + test.stderr).toMatch(/SUCCESS/);
    expect(test.status).toBe(0);
  });

  it('a fresh daemon exports every series at 0, passes promtool check metrics, and its first failure alerts', async () => {
    const scrape = await scrapeDaemon({}, /"msg":"gridsync started"/);
    const lint = spawnSync(promtool as string, ['check', 'metrics'], { input: scrape, encoding: 'utf8' });
    expect((lint.stdout + lint.stderr).trim()).toBe('');
    const have = metricNames(scrape);
    const rules = metricNames(fs.readFileSync(alertsFile, 'utf8'));
    const dashboard = metricNames(fs.readFileSync(dashboardFile, 'utf8'));
    expect([...rules].filter((m) => !have.has(m))).toEqual([]);
    expect([...dashboard].filter((m) => !have.has(m))).toEqual([]);
    // Stock Node.js dashboards find the process metrics under their usual names.
    expect(scrape).toMatch(/^process_resident_memory_bytes \d+/m);
    expect(scrape).not.toMatch(/gridsync_process_|gridsync_nodejs_/);
    expect(scrape).toMatch(/^gridsync_build_info\{version="\d+\.\d+\.\d+[^"]*",protocol="rest",journal="sqlite"\} 1$/m);
    expect(scrape).not.toMatch(/=""/);
    expect(scrape).toMatch(/^gridsync_folder_free_bytes\{folder="stateDir"\} \d+/m);
    // Nothing has failed yet, and the series are there already, at 0.
    for (const [direction, kind] of [
      ['in', 'failed'],
      ['out', 'failed'],
      ['out', 'rejected'],
    ])
      expect(scrape).toContain(`gridsync_failures_total{direction="${direction}",mailbox="mb1001",kind="${kind}"} 0`);
    for (const direction of ['in', 'out']) expect(scrape).toContain(`gridsync_deferred_total{direction="${direction}",mailbox="mb1001"} 0`);

    // An hour of this daemon as scraped, healthy (its last-success time advancing), then one rejected file.
    const input = seriesFrom(scrape, 120, (s) => {
      if (s.name === 'gridsync_last_success_timestamp_seconds') return '0+60x120';
      if (s.name === 'gridsync_failures_total' && s.labels.includes('kind="rejected"')) return `${s.value}x60 ${s.value + 1}x60`;
      if (s.name === 'gridsync_folder_free_bytes') return '50000000000x120';
      return undefined;
    });
    const r = evaluateRules(input, '90m', { GridsyncItemsFailing: ['direction="out",mailbox="mb1001",kind="rejected"'] });
    expect(r.out).toMatch(/SUCCESS/);
    expect(r.status).toBe(0);
  });

  it('the dashboard plots retries per minute by mailbox and reason, as the daemon counts them', async () => {
    // GridsyncServiceFlaky tells the operator to look at the retries' reason: the dashboard must
    // show them. The daemon's own series, one of them retried once a minute for an hour.
    const scrape = await scrapeDaemon({}, /"msg":"gridsync started"/);
    expect(scrape).toContain('gridsync_retries_total{mailbox="mb1001",reason="http_5xx"} 0');
    const { panels } = JSON.parse(fs.readFileSync(dashboardFile, 'utf8')) as { panels: Panel[] };
    const plotted = dashboardTargets(panels).filter((t) => t.expr.includes('gridsync_retries_total'));
    expect(plotted.map((t) => t.title)).toHaveLength(1);
    const target = plotted[0] as Target;
    expect(target.legendFormat).toMatch(/\{\{mailbox\}\}.*\{\{reason\}\}/);
    const input = seriesFrom(scrape, 60, (s) =>
      s.name === 'gridsync_retries_total' && s.labels === 'mailbox="mb1001",reason="http_5xx"' ? '0+1x60' : undefined,
    );
    const r = evaluateQuery(input, `(${target.expr}) > 0`, '30m', [{ labels: '{mailbox="mb1001",reason="http_5xx"}', value: 1 }]);
    expect(r.out).toMatch(/SUCCESS/);
    expect(r.status).toBe(0);
  });

  it('with cron windows, a daemon waiting for its first window raises no alert all day', async () => {
    // A window that does not open today: the daemon waits, its last-success time at 0. The mailbox
    // is the key's own, unnamed: its series carry the id the service tells (mb1001).
    const scrape = await scrapeDaemon({ schedule: { cron: ['0 0 1 1 *'] } }, /"msg":"transfer windows scheduled"/, {
      mailboxId: undefined,
    });
    expect(scrape).toMatch(/^gridsync_last_success_timestamp_seconds\{mailbox="mb1001"\} 0$/m);
    const input = seriesFrom(scrape, 600, (s) => (s.name === 'gridsync_folder_free_bytes' ? '50000000000x600' : undefined));
    const r = evaluateRules(input, '590m', {});
    expect(r.out).toMatch(/SUCCESS/);
    expect(r.status).toBe(0);
  });
});
