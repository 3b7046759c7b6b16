// The daemon of `gridsync run` (the built one, without its CLI wrapper) in a child process started
// with --expose-gc, answering its parent's "heap" message with the heap in use after full
// collections (what the process keeps, not what it has yet to collect), compiled code left out:
// the JIT's code grows for long after start and is not something the daemon keeps per item), and
// its open descriptors, sockets apart from the rest.
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
    // Read in the same turn as the last collection: a turn in between runs the daemon's timers and
    // socket callbacks (its poll, its rescan), and the reading counted what they allocated, garbage
    // or not. Read after such a turn, 50 ms apart with the daemon idle, the heap differed by up to
    // 300 kB (at a fixed concurrency of 4 as at the adaptive one) where heap snapshots between the
    // readings found under 70 kB of objects changed; read here, by 20 kB at most.
    globalThis.gc();
    const spaces = v8.getHeapSpaceStatistics().filter((s) => !s.space_name.startsWith('code'));
    const heapUsed = spaces.reduce((sum, s) => sum + s.space_used_size, 0);
    const fds = fs.readdirSync('/proc/self/fd').map((fd) => {
      try {
        return fs.readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return ''; // the descriptor readdir itself had open
      }
    });
    process.send({
      heapUsed,
      sockets: fds.filter((l) => l.startsWith('socket:')).length,
      others: fds.filter((l) => l !== '' && !l.startsWith('socket:')).length,
    });
  } else if (m === 'stop') {
    await daemon.close();
    process.exit(0);
  }
});
process.send('ready');
