// A service that echoes the credentials back: a 400 whose message quotes the API key (REST), a
// SOAP fault quoting the session id (with an API key, the session id is the key). The built
// daemon runs against it as a real process; afterwards the key must appear in none of the places
// gridsync stores or shows text from outside: the .error.json in errorDir, the log, the journal's
// bytes, `gridsync status` (table and JSON), the unauthenticated /readyz and the /metrics scrape.
// A password written into a callbacks URL was shown in the clear by doctor, the run log and
// `callbacks list` (only the service's and the journal's URLs were masked).
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { startEmulator } from '@gridsync/emulator';
import { eventually, runCli, startCli, type CliChild } from '../../helpers/daemon-child.js';
import { makeDaemonWorld, type DaemonWorld } from '../../helpers/daemon-config.js';
import { x12 } from '../../helpers/edi.js';
import { startScriptedService } from '../../helpers/scripted-service.js';

const KEY = 'sk-live-7Hq2vX9pLm4Rt8Wz';

describe('secrets echoed by the service reach no sink', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  /** A SOAP proxy in front of the emulator that answers the inbox list and uploads with a fault quoting the session id. */
  async function echoingSoapService(): Promise<{ url: string; key: string }> {
    const emu = await startEmulator({ port: 0 });
    cleanups.push(() => emu.close());
    const server = http.createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = Buffer.concat(chunks).toString('utf8');
      const session = /<SessionID>([^<]*)<\/SessionID>/.exec(body)?.[1];
      if (session && /ParcelUpload|ParcelInBox/.test(body)) {
        res.writeHead(500, { 'content-type': 'text/xml; charset=utf-8' });
        res.end(
          `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>` +
            `<soap:Fault><faultcode>soap:Client</faultcode><faultstring>session ${session} may not do this</faultstring>` +
            `<detail><ErrorInfo xmlns=""><ErrorCode>3</ErrorCode><ErrorString>AccessDenied</ErrorString><ErrorItem>SessionID</ErrorItem>` +
            `<ErrorMessage>session ${session} may not do this</ErrorMessage></ErrorInfo></detail></soap:Fault></soap:Body></soap:Envelope>`,
        );
        return;
      }
      const upstream = await fetch(`${emu.url}${req.url ?? '/'}`, {
        method: req.method ?? 'GET',
        headers: Object.fromEntries(Object.entries(req.headers).filter(([k]) => k !== 'host' && k !== 'content-length')) as Record<
          string,
          string
        >,
        ...(req.method === 'GET' || req.method === 'HEAD' ? {} : { body }),
      });
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'text/xml' });
      res.end(Buffer.from(await upstream.arrayBuffer()));
    });
    server.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, key: 'demo-key-1001' };
  }

  /** The scripted REST service, answering the inbox list and uploads with a 400 quoting the key. */
  async function echoingRestService(): Promise<{ url: string; key: string }> {
    const svc = await startScriptedService({ apiKey: KEY });
    cleanups.push(() => svc.close());
    svc.variants.fault = (req, res) => {
      if (req.path !== '/v2/parcels/upload' && req.path !== '/v2/parcels/pending-inbox-list') return false;
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ success: false, data: null, errorCode: 'InvalidParameter', message: `sender not allowed for API key ${KEY}` }),
      );
      return true;
    };
    return { url: svc.url, key: KEY };
  }

  async function attack(protocol: 'rest' | 'soap', service: { url: string; key: string }) {
    const w: DaemonWorld = makeDaemonWorld({
      api: { baseUrl: service.url, protocol, apiKey: service.key },
      log: { level: 'info', pretty: false },
      http: { enabled: true, port: 0 },
    });
    cleanups.push(() => w.cleanup());
    fs.mkdirSync(w.outbox, { recursive: true });
    fs.writeFileSync(path.join(w.outbox, 'order.x12'), x12(42));
    const child: CliChild = startCli(['run', '-c', w.configFile], {}, w.dir);
    cleanups.push(() => child.kill('SIGKILL'));
    const url = JSON.parse((await child.waitFor(/\{[^\n]*health and metrics endpoint listening[^\n]*\}/))[0]).url as string;
    const report = path.join(w.error, 'order.x12.error.json');
    await eventually(() => fs.existsSync(report), 20_000, 'the refused upload in errorDir');
    const readyz = await eventually(
      async () => {
        const text = await (await fetch(`${url}/readyz`)).text();
        return (JSON.parse(text) as { lastError: string | null }).lastError ? text : undefined;
      },
      20_000,
      '/readyz naming the last error',
    );
    const metrics = await (await fetch(`${url}/metrics`)).text();
    child.kill('SIGTERM');
    const exit = await child.exited;
    const table = runCli(['status', '-c', w.configFile], {}, w.dir);
    const json = runCli(['status', '-c', w.configFile, '--json'], {}, w.dir);
    const journal = fs
      .readdirSync(w.state)
      .filter((f) => f.startsWith('journal.sqlite'))
      .map((f) => fs.readFileSync(path.join(w.state, f)).toString('latin1'))
      .join('');
    const sinks = {
      errorReport: fs.readFileSync(report, 'utf8'),
      log: exit.stdout + exit.stderr,
      journal,
      status: table.stdout + table.stderr,
      statusJson: json.stdout + json.stderr,
      readyz,
      metrics,
    };
    // The echo did reach gridsync (the test is not vacuous), masked.
    expect(sinks.errorReport).toContain('***');
    expect(sinks.log).toContain('***');
    expect(sinks.readyz).toContain('***');
    expect(sinks.statusJson).toContain('***');
    expect(sinks.metrics).toContain('gridsync_deferred_total');
    for (const [sink, text] of Object.entries(sinks)) {
      expect({ sink, leaked: text.includes(service.key) }).toEqual({ sink, leaked: false });
      expect({ sink, leaked: text.includes(Buffer.from(service.key).toString('base64')) }).toEqual({ sink, leaked: false });
    }
    expect(YAML.parse(fs.readFileSync(w.configFile, 'utf8')).api.apiKey).toBe(service.key);
  }

  it('a password written in a callbacks URL: masked in doctor, the log and callbacks list', async () => {
    const [publicPw, restPw] = ['CbPw-9x7Qz4', 'RsPw-3k2Lw8'];
    const w = makeDaemonWorld({
      log: { level: 'debug', pretty: false },
      callbacks: {
        listen: '127.0.0.1:0',
        publicUrl: `https://u:${publicPw}@edi.example.com/cb`,
        restUrl: `https://u:${restPw}@127.0.0.1:9`,
      },
    });
    cleanups.push(() => w.cleanup());
    const child: CliChild = startCli(['run', '-c', w.configFile], {}, w.dir);
    cleanups.push(() => child.kill('SIGKILL'));
    await child.waitFor(/callback receiver listening/);
    await child.waitFor(/callback registered/);
    child.kill('SIGTERM');
    const exit = await child.exited;
    const doctor = runCli(['doctor', '-c', w.configFile], {}, w.dir);
    const list = runCli(['callbacks', 'list', '-c', w.configFile], {}, w.dir);
    const sinks = { log: exit.stdout + exit.stderr, doctor: doctor.stdout + doctor.stderr, callbacksList: list.stdout + list.stderr };
    // Not vacuous: each sink shows the URL, with the password masked.
    for (const text of Object.values(sinks)) expect(text).toContain('https://u:***@edi.example.com/cb');
    for (const [sink, text] of Object.entries(sinks))
      expect({ sink, leaked: text.includes(publicPw) || text.includes(restPw) }).toEqual({ sink, leaked: false });
  });

  it('REST: a 400 quoting the API key', async () => {
    await attack('rest', await echoingRestService());
  });

  it('SOAP: a fault quoting the session id (the API key)', async () => {
    await attack('soap', await echoingSoapService());
  });
});
