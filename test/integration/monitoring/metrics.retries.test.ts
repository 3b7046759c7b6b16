// Operators, round 5: every retry inside a call was a warning ("request failed, retrying"), two per
// failed call and all through an outage the daemon already reports once, yet it was the only sign
// of a flaky service whose retries succeed. Now retries are counted (gridsync_retries_total, by
// mailbox and reason) and the line is at debug. The built daemon runs against scripted REST and
// SOAP services (not our emulator) whose first download fails once; /metrics is scraped over HTTP.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, startCli } from '../../helpers/daemon-child.js';
import { makeDaemonWorld } from '../../helpers/daemon-config.js';
import { DROP, soapService } from '../../helpers/scripted-soap.js';
import { startScriptedService } from '../../helpers/scripted-service.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const hasPromtool = spawnSync('promtool', ['--version']).status === 0;

/**
 * `gridsync run` at log level debug against `api` until `delivered`; returns its scrape of
 * /metrics and its log lines.
 */
async function runUntil(
  api: Record<string, unknown>,
  delivered: () => boolean,
): Promise<{ scrape: string; lines: Record<string, unknown>[] }> {
  const w = makeDaemonWorld({ api, http: { enabled: true, port: 0 }, log: { level: 'debug', pretty: false } }, { outbox: undefined });
  cleanups.push(() => w.cleanup());
  fs.chmodSync(w.configFile, 0o600); // the config holds a key: readable by all, it is a warning of its own
  const child = startCli(['run', '-c', w.configFile], {}, w.dir);
  cleanups.push(() => child.kill('SIGKILL'));
  const url = (await child.waitFor(/"url":"(http:[^"]+)"[^\n]*health and metrics endpoint listening/, 30_000))[1] as string;
  await eventually(delivered, 20_000, 'the parcel delivered and confirmed');
  expect(fs.readdirSync(w.inbox)).toEqual(['po.x12']);
  const scrape = await (await fetch(`${url}/metrics`)).text();
  child.kill('SIGTERM');
  const { code, stdout } = await child.exited;
  expect(code).toBe(0);
  const lines = stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { scrape, lines };
}

/** The retry series of the scrape, by their label text. */
const retrySeries = (scrape: string): Record<string, number> =>
  Object.fromEntries([...scrape.matchAll(/^gridsync_retries_total\{([^}]*)\} (\S+)$/gm)].map((m) => [m[1] as string, Number(m[2])]));

function expectCountedQuietly(scrape: string, lines: Record<string, unknown>[], reason: string): void {
  const series = retrySeries(scrape);
  expect(series[`mailbox="mb1001",reason="${reason}"`]).toBe(1);
  // Every other series is there, at 0: a retry-rate rule sees the first rise.
  for (const [labels, value] of Object.entries(series))
    if (labels !== `mailbox="mb1001",reason="${reason}"`) expect([labels, value]).toEqual([labels, 0]);
  expect(Object.keys(series).sort()).toEqual(
    ['http_429', 'http_5xx', 'transport', 'truncated'].flatMap((r) => [`mailbox="mb1001",reason="${r}"`, `reason="${r}"`]).sort(),
  );
  if (hasPromtool) {
    const lint = spawnSync('promtool', ['check', 'metrics'], { input: scrape, encoding: 'utf8' });
    expect((lint.stdout + lint.stderr).trim()).toBe('');
  }
  const retried = lines.filter((l) => l.msg === 'request failed, retrying');
  expect(retried.map((l) => [l.level, l.endpoint])).toEqual([[20, expect.stringMatching(/download|ParcelDownload/)]]);
  // Nothing at warn or above: the retry succeeded.
  expect(lines.filter((l) => (l.level as number) >= 40)).toEqual([]);
}

describe('a download that fails once and then succeeds', () => {
  it('REST: a 503 is counted as http_5xx under its mailbox; the retry is logged at debug only', async () => {
    const svc = await startScriptedService({ apiKey: 'retry-key-8Tq1' });
    cleanups.push(() => svc.close());
    svc.addInbound('po.x12', 'ISA*00*po~');
    let downloads = 0;
    svc.variants.fault = (req, res) => {
      if (req.path !== '/v2/parcels/download' || ++downloads > 1) return false;
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ success: false, data: null, errorCode: 'ServiceUnavailable', message: 'try again' }));
      return true;
    };
    const { scrape, lines } = await runUntil(
      { baseUrl: svc.url, protocol: 'rest', apiKey: svc.apiKey },
      () => svc.confirmed().length === 1,
    );
    expectCountedQuietly(scrape, lines, 'http_5xx');
  }, 60_000);

  it('SOAP: a connection dropped is counted as transport under its mailbox; the retry is logged at debug only', async () => {
    const content = Buffer.from('ISA*soap-po~');
    let ready = true;
    let downloads = 0;
    const soap = await soapService((operation) => {
      if (operation === 'WhoAmI') return '<WhoAmIResult><UserID>11</UserID><MailboxID>1001</MailboxID></WhoAmIResult>';
      if (operation === 'ParcelInBoxEx')
        return (
          `<ParcelInBoxExResult><Count>${ready ? 1 : 0}</Count><TotalRecords>${ready ? 1 : 0}</TotalRecords><ParcelIDInfoList>` +
          (ready
            ? `<ParcelIDInfo><ParcelID>71</ParcelID><ParcelBytes>${content.length}</ParcelBytes><ParcelDate>2026-05-07T08:00:00Z</ParcelDate>` +
              `<MailboxIDFrom>0</MailboxIDFrom><MailboxIDTo>1001</MailboxIDTo><FileName>po.x12</FileName><StatusCode>InBoxReady</StatusCode></ParcelIDInfo>`
            : '') +
          `</ParcelIDInfoList></ParcelInBoxExResult>`
        );
      if (operation === 'ParcelDownload')
        return ++downloads === 1
          ? DROP
          : `<ParcelDownloadResult><ParcelID>71</ParcelID><Bytes>${content.length}</Bytes><ContentBase64String>${content.toString('base64')}</ContentBase64String></ParcelDownloadResult>`;
      if (operation === 'ParcelDownloadConfirm') {
        ready = false;
        return '<ParcelDownloadConfirmResult>true</ParcelDownloadConfirmResult>';
      }
      return undefined;
    });
    cleanups.push(() => soap.close());
    const { scrape, lines } = await runUntil({ baseUrl: soap.url, protocol: 'soap', apiKey: 'retry-key-8Tq1' }, () => !ready);
    expectCountedQuietly(scrape, lines, 'transport');
  }, 60_000);
});
