// Child process for the SOAP memory test: uploads a large file and downloads it back with the
// built SOAP client, then reports its peak RSS (VmHWM) against the RSS after start-up.
import fs from 'node:fs';
const [url, file, out] = process.argv.slice(2);
const { SoapClient } = await import(new URL('../../dist/api/index.js', import.meta.url).href);
const rss = () => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]) * 1024;
const partner = new SoapClient({ url, auth: { apiKey: 'demo-key-1002' }, timeouts: { bodyMs: 120_000 } });
const us = new SoapClient({ url, auth: { apiKey: 'demo-key-1001' }, timeouts: { bodyMs: 120_000 } });
const base = rss();
const t0 = performance.now();
const { parcelId } = await partner.uploadParcel(file, { fileName: 'big.bin', gridIdFrom: 5002, gridIdTo: 5001 });
const t1 = performance.now();
const inbound = (await us.pendingInbox(1001)).parcels.find((p) => p.fileName === 'big.bin');
const sink = fs.createWriteStream(out);
const r = await us.downloadParcel(inbound.parcelId, sink, { expectedBytes: inbound.bytes });
sink.end();
await new Promise((res) => sink.on('finish', res));
const t2 = performance.now();
const peak = Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]) * 1024;
await partner.close();
await us.close();
console.log(
  JSON.stringify({ parcelId, bytes: r.bytes, sha256: r.sha256, baseRss: base, peakRss: peak, uploadMs: t1 - t0, downloadMs: t2 - t1 }),
);
