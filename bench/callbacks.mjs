// Arrival-to-inbox latency with callbacks (poll 10m) beside polling alone (poll 30s by default), same run,
// same emulator, parcels injected into both mailboxes at the same moments: two real `gridsync run`
// processes, the callback one with a TLS receiver on loopback (a self-signed certificate).
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { selfSignedCert } from '../test/helpers/tls.mjs';
import { spawnChild } from './children.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** @returns {Promise<number>} a free TCP port on 127.0.0.1 */
async function freePort() {
  const s = net.createServer();
  await new Promise((r) => s.listen(0, '127.0.0.1', () => r(undefined)));
  const addr = s.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  await new Promise((r) => s.close(() => r(undefined)));
  return port;
}

/**
 * Starts `gridsync run` on a config; resolves once `ready` shows in its log.
 * @param {string} cliPath @param {string} dir @param {object} config @param {RegExp} ready
 */
async function startRun(cliPath, dir, config, ready) {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'gridsync.yaml');
  fs.writeFileSync(file, JSON.stringify(config));
  const proc = spawnChild(process.execPath, [cliPath, 'run', '-c', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  await new Promise((resolve, reject) => {
    const on = (/** @type {Buffer} */ d) => {
      out += d;
      if (ready.test(out)) resolve(undefined);
    };
    proc.stdout.on('data', on);
    proc.stderr.on('data', on);
    proc.once('exit', (code) => reject(new Error(`gridsync run exited ${code}: ${out.slice(-1000)}`)));
  });
  return {
    stop: async () => {
      if (proc.exitCode !== null) return;
      proc.kill('SIGTERM');
      await new Promise((r) => proc.once('exit', r));
    },
  };
}

/** @param {number[]} xs @param {number} q */
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] ?? NaN;
};

/**
 * @param {{ emulatorUrl: string, cliPath: string, n: number, gapMs: number, poll?: string, auth?: string }} o
 * @returns {Promise<{ callbacks: { medianMs: number, p99Ms: number }, polling: { medianMs: number, p99Ms: number } }>}
 */
export async function callbackLatency(o) {
  const dir = fs.mkdtempSync(path.join(process.env.GRIDSYNC_BENCH_ROOT ?? os.tmpdir(), 'gridsync-bench-cb-'));
  if (!selfSignedCert(dir)) throw new Error('openssl is needed for the callback bench');
  const port = await freePort();
  const common = (/** @type {number} */ mailboxId, /** @type {string} */ poll) => ({
    api: { baseUrl: o.emulatorUrl, apiKey: `demo-key-${mailboxId}` },
    stateDir: './state',
    log: { level: 'info', pretty: false },
    schedule: { poll },
    mailboxes: [{ mailboxId, inbox: { dir: './inbox' } }],
  });
  const withCallbacks = await startRun(
    o.cliPath,
    path.join(dir, 'callbacks'),
    {
      ...common(1001, '10m'),
      callbacks: {
        listen: `127.0.0.1:${port}`,
        publicUrl: `https://127.0.0.1:${port}/cb`,
        tls: { certFile: path.join(dir, 'cert.pem'), keyFile: path.join(dir, 'key.pem') },
        auth: o.auth ?? 'basic',
      },
    },
    /callback registered/,
  );
  const polling = await startRun(o.cliPath, path.join(dir, 'polling'), common(1002, o.poll ?? '30s'), /gridsync started/);
  try {
    await sleep(1000); // both start-up polls are done
    /** @type {Map<string, number>} */
    const injected = new Map();
    const arrived = { callbacks: /** @type {Map<string, number>} */ (new Map()), polling: /** @type {Map<string, number>} */ (new Map()) };
    const watch = setInterval(() => {
      for (const [k, m] of Object.entries(arrived)) {
        const inbox = path.join(dir, k, 'inbox');
        for (const f of fs.existsSync(inbox) ? fs.readdirSync(inbox) : []) if (!m.has(f)) m.set(f, Date.now());
      }
    }, 10);
    for (let i = 0; i < o.n; i++) {
      const name = `lat${i}.x12`;
      const content = Buffer.from(`ISA*${i}~`).toString('base64');
      injected.set(name, Date.now());
      await Promise.all(
        [1001, 1002].map((mailboxId) =>
          fetch(`${o.emulatorUrl}/_emulator/inject`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ mailboxId, fileName: name, content }),
          }),
        ),
      );
      await sleep(o.gapMs);
    }
    const deadline = Date.now() + 40_000;
    while ((arrived.callbacks.size < o.n || arrived.polling.size < o.n) && Date.now() < deadline) await sleep(50);
    clearInterval(watch);
    const figures = (/** @type {Map<string, number>} */ m) => {
      const xs = [...injected].map(([name, at]) => (m.get(name) ?? Infinity) - at);
      return { medianMs: quantile(xs, 0.5), p99Ms: quantile(xs, 0.99) };
    };
    return { callbacks: figures(arrived.callbacks), polling: figures(arrived.polling) };
  } finally {
    await withCallbacks.stop();
    await polling.stop();
    if (!process.env.GRIDSYNC_BENCH_ROOT) fs.rmSync(dir, { recursive: true, force: true });
  }
}
