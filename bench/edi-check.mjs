// `npm run build && node bench/edi-check.mjs [--mb 500] [--corpus DIR]`: how fast the outbound
// envelope check streams over a large file, beside a plain read of the same file in the same run
// (the baseline: what any check has to pay at least). Also times the largest file of the EDI
// corpus when one is given (--corpus or GRIDSYNC_EDI_CORPUS). Prints MB/s, the ratio to the
// baseline and the peak RSS; the generated file lives in a temporary directory removed at the end.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { validateEnvelopeFile } = await import(pathToFileURL(path.join(repoRoot, 'dist', 'outbound', 'checks.js')).href);

// Child mode: one check of one file in a fresh process, so that its peak RSS is the check's alone.
if (process.argv[2] === '--child') {
  const verdict = await validateEnvelopeFile(process.argv[3], { counts: process.argv[4] === 'counts' });
  console.log(JSON.stringify({ ok: verdict.ok, maxRssMb: process.resourceUsage().maxRSS / 1024 }));
  process.exit(0);
}

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? dflt : process.argv[i + 1];
};
const MB = 1024 * 1024;
const targetMb = Number(arg('mb', '500'));
const corpus = arg('corpus', process.env.GRIDSYNC_EDI_CORPUS);

/** X12 interchanges of 1,000 invoices each (about 70 KB), appended until the file reaches the target size. */
function writeLargeX12(file, bytes) {
  const pad = (s, n) => s.padEnd(n, ' ').slice(0, n);
  const fd = fs.openSync(file, 'w');
  let written = 0;
  let ctrl = 0;
  try {
    while (written < bytes) {
      ctrl++;
      const c9 = String(ctrl).padStart(9, '0');
      const parts = [
        `ISA*00*${pad('', 10)}*00*${pad('', 10)}*ZZ*${pad('GRIDSYNC', 15)}*ZZ*${pad('DEMOPARTNER', 15)}*261122*1200*U*00401*${c9}*0*P*>~\n`,
      ];
      parts.push(`GS*IN*GRIDSYNC*DEMOPARTNER*20261122*1200*${ctrl}*X*004010~\n`);
      for (let s = 1; s <= 1000; s++) {
        const st = String(s).padStart(4, '0');
        parts.push(
          `ST*810*${st}~\nBIG*20261122*INV${ctrl}-${s}~\nN1*ST*ACME WAREHOUSE*92*0042~\nIT1*1*12*EA*9.99**VP*SKU-${s}~\nTDS*11988~\nSE*6*${st}~\n`,
        );
      }
      parts.push(`GE*1000*${ctrl}~\nIEA*1*${c9}~\n`);
      const buf = Buffer.from(parts.join(''), 'latin1');
      fs.writeSync(fd, buf);
      written += buf.length;
    }
  } finally {
    fs.closeSync(fd);
  }
  return { bytes: written, interchanges: ctrl };
}

async function plainRead(file) {
  let n = 0;
  for await (const chunk of fs.createReadStream(file, { highWaterMark: MB })) n += chunk.length;
  return n;
}

/** Wall time and CPU time (user + system; the machine may be shared, CPU time is the steadier figure). */
async function time(fn) {
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const result = await fn();
  const c = process.cpuUsage(c0);
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, cpuMs: (c.user + c.system) / 1000, result };
}

async function measure(label, file) {
  const bytes = fs.statSync(file).size;
  await plainRead(file); // warm the page cache so both figures read from memory
  const base = await time(() => plainRead(file));
  const envelopeOnly = await time(() => validateEnvelopeFile(file, { counts: false }));
  const withCounts = await time(() => validateEnvelopeFile(file, { counts: true }));
  const mbs = (ms) => (bytes / MB / (ms / 1000)).toFixed(0);
  const line = (name, t) =>
    `  ${name.padEnd(24)} wall ${t.ms.toFixed(0).padStart(6)} ms ${mbs(t.ms).padStart(5)} MB/s   cpu ${t.cpuMs.toFixed(0).padStart(6)} ms ${mbs(t.cpuMs).padStart(5)} MB/s` +
    (t === base ? '' : `   ${(t.cpuMs / base.cpuMs).toFixed(1)}× the read's cpu`);
  console.log(`${label}: ${(bytes / MB).toFixed(1)} MB, verdict ${JSON.stringify(withCounts.result)}`);
  console.log(line('plain read (baseline)', base));
  console.log(line('check, counts on', withCounts));
  console.log(line('check, envelope only', envelopeOnly));
}

if (corpus && fs.existsSync(path.join(corpus, 'files'))) {
  const dir = path.join(corpus, 'files');
  const largest = fs
    .readdirSync(dir)
    .map((f) => ({ f, size: fs.statSync(path.join(dir, f)).size }))
    .sort((a, b) => b.size - a.size)[0];
  if (largest) await measure(`largest corpus file ${largest.f}`, path.join(dir, largest.f));
} else {
  console.log('no EDI corpus given (--corpus DIR or GRIDSYNC_EDI_CORPUS): skipping the largest-corpus-file figure');
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-edi-bench-'));
try {
  const file = path.join(tmp, 'large.x12');
  const gen = writeLargeX12(file, targetMb * MB);
  await measure(`generated X12, ${gen.interchanges} interchanges of 1,000 invoices`, file);
  const child = (args) =>
    JSON.parse(execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--child', ...args], { encoding: 'utf8' }));
  const bare = JSON.parse(
    execFileSync(process.execPath, ['-e', 'console.log(JSON.stringify({ maxRssMb: process.resourceUsage().maxRSS / 1024 }))'], {
      encoding: 'utf8',
    }),
  );
  const checked = child([file, 'counts']);
  console.log(
    `  peak RSS of a process that only checks it: ${checked.maxRssMb.toFixed(0)} MB (an empty node process: ${bare.maxRssMb.toFixed(0)} MB; the file is ${(gen.bytes / MB).toFixed(0)} MB)`,
  );
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
