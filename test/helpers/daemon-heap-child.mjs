// The daemon of `gridsync run` (the built one, without its CLI wrapper) in a child process started
// with --expose-gc, answering its parent's "heap" message with the heap in use after full
// collections (what the process keeps, not what it has yet to collect), compiled code left out:
// the JIT's code grows for long after start and is not something the daemon keeps per item), and
// its open descriptors.
// Usage: fork(this file, [configFile], { execArgv: ['--expose-gc'] }).
import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import { fileURLToPath, pathToFileURL } from 'node:url';

const dist = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist');
const { Daemon } = await import(pathToFileURL(path.join(dist, 'daemon', 'index.js')).href);
const { loadConfigOrThrow, loggerFor } = await import(pathToFileURL(path.join(dist, 'cli', 'common.js')).href);

const loaded = loadConfigOrThrow(process.argv[2]);
const daemon = await Daemon.open({ loaded, logger: loggerFor(loaded), waitForService: true });
await daemon.start();
process.on('message', async (m) => {
  if (m === 'heap') {
    for (let i = 0; i < 3; i++) {
      globalThis.gc();
      await new Promise((r) => setImmediate(r));
    }
    const spaces = v8.getHeapSpaceStatistics().filter((s) => !s.space_name.startsWith('code'));
    process.send({ heapUsed: spaces.reduce((sum, s) => sum + s.space_used_size, 0), fds: fs.readdirSync('/proc/self/fd').length });
  } else if (m === 'stop') {
    await daemon.close();
    process.exit(0);
  }
});
process.send('ready');
