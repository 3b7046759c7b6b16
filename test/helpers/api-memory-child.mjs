// Child process for the memory test: uploads a large file and downloads it back with the built
// client, then reports its peak RSS (VmHWM) against the RSS after start-up.
import fs from 'node:fs';
const [url, file, out, key] = process.argv.slice(2);
const { GridClient } = await import(new URL('../../dist/api/index.js', import.meta.url).href);
const rss = () => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]) * 1024;
const client = new GridClient({ baseUrl: url, auth: { apiKey: key } });
const base = rss();
const t0 = performance.now();
const { parcelId } = await client.uploadParcel(file, { fileName: 'big.bin', gridIdFrom: 5002, gridIdTo: 5001 });
const t1 = performance.now();
const partner = new GridClient({ baseUrl: url, auth: { apiKey: 'demo-key-1001' } });
const list = await fetch(`${url}/v2/parcels/pending-inbox-list`, {
  method: 'POST',
  headers: { 'x-api-key': 'demo-key-1001', 'content-type': 'application/json' },
  body: '{}',
}).then((r) => r.json());
const inbound = list.data.find((p) => p.fileName === 'big.bin');
const sink = fs.createWriteStream(out);
const r = await partner.downloadParcel(inbound.parcelId, sink);
sink.end();
await new Promise((res) => sink.on('finish', res));
const t2 = performance.now();
const peak = Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]) * 1024;
await client.close();
await partner.close();
console.log(
  JSON.stringify({ parcelId, bytes: r.bytes, sha256: r.sha256, baseRss: base, peakRss: peak, uploadMs: t1 - t0, downloadMs: t2 - t1 }),
);
