// Figures of the daemon (issue #6): start-up to ready, idle RSS, the quick-start round trip and
// the SIGTERM stop time, with the quick-start config in a temp dir. Not a test (prints, asserts
// nothing): `npm run build && node test/helpers/daemon-measure.mjs`. Belongs in bench/ if the
// bench owner wants it.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
const repo = process.argv[2] ?? process.cwd();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-measure-'));
fs.mkdirSync(path.join(dir, 'config'));
fs.copyFileSync(path.join(repo, 'config/gridsync.yaml'), path.join(dir, 'config/gridsync.yaml'));
const t0 = performance.now();
const child = spawn(
  process.execPath,
  ['--max-semi-space-size=4', path.join(repo, 'dist/cli/main.js'), 'run', '-c', path.join(dir, 'config/gridsync.yaml')],
  { env: { ...process.env, GRIDSYNC_HTTP_PORT: '0', GRIDSYNC_SCHEDULE_POLL: '1s' }, stdio: ['ignore', 'pipe', 'inherit'] },
);
let out = '';
child.stdout.on('data', (d) => (out += d));
const until = async (f) => {
  while (!f()) await new Promise((r) => setTimeout(r, 5));
};
await until(() => out.includes('"msg":"gridsync started"'));
const tStart = performance.now() - t0;
await new Promise((r) => setTimeout(r, 5000));
const rss = Number(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)[1]) / 1024;
const pad = (s, n) => s.padEnd(n, ' ').slice(0, n);
const x12 = `ISA*00*${pad('', 10)}*00*${pad('', 10)}*ZZ*${pad('GRIDSYNC', 15)}*ZZ*${pad('DEMOPARTNER', 15)}*261122*1200*U*00401*000000777*0*P*>~GS*IN*GRIDSYNC*DEMOPARTNER*20261122*1200*777*X*004010~ST*810*0001~N1*ST*TEST~SE*3*0001~GE*1*777~IEA*1*000000777~`;
const t1 = performance.now();
fs.writeFileSync(path.join(dir, 'var/outbox/m.x12.part'), x12);
fs.renameSync(path.join(dir, 'var/outbox/m.x12.part'), path.join(dir, 'var/outbox/m.x12'));
await until(() => fs.existsSync(path.join(dir, 'var/sent/m.x12')));
const tSent = performance.now() - t1;
await until(() => fs.readdirSync(path.join(dir, 'var/inbox')).length > 0);
const tAck = performance.now() - t1;
const t2 = performance.now();
child.kill('SIGTERM');
await new Promise((r) => child.on('exit', r));
const tStop = performance.now() - t2;
console.log(`start-up to ready (embedded emulator): ${tStart.toFixed(0)} ms`);
console.log(`idle RSS after 5 s: ${rss.toFixed(1)} MB`);
console.log(`drop → sent: ${tSent.toFixed(0)} ms (stableMs 1s)`);
console.log(`drop → 997 in inbox: ${tAck.toFixed(0)} ms (poll 1s, partner ack delay 200 ms)`);
console.log(`SIGTERM → exit (idle): ${tStop.toFixed(0)} ms`);
fs.rmSync(dir, { recursive: true, force: true });
