// Issue 24, a leftover of attack 8: a service whose confirm answers "ok" and changes nothing. The
// daemon remembers that its confirm has not been seen to take, and confirms again instead of
// placing again — but that memory lived in the process only: the daemon restarted, saw the parcel
// ready after its confirmation, took it for a reset on the service and placed a second copy. The
// built daemon runs as a real process against a scripted service (not our emulator), is stopped
// and started again; the inbox holds exactly one copy.
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, startCli, type CliChild } from '../../helpers/daemon-child.js';
import { makeDaemonWorld } from '../../helpers/daemon-config.js';
import { startScriptedService, wireJson } from '../../helpers/scripted-service.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('a confirm the service ignores, across a restart', () => {
  it('the parcel is confirmed again, never placed again: one copy in the inbox', async () => {
    const svc = await startScriptedService({ apiKey: 'restart-key-3Fk9' });
    cleanups.push(() => svc.close());
    svc.addInbound('po.x12', 'ISA*00*po~');
    svc.variants.fault = (req, res) => {
      if (req.path !== '/v2/parcels/confirm') return false;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(wireJson({ success: true, data: true, errorCode: '', message: '' }));
      return true;
    };
    const w = makeDaemonWorld({ api: { baseUrl: svc.url, protocol: 'rest', apiKey: svc.apiKey } }, { outbox: undefined });
    cleanups.push(() => w.cleanup());
    const confirms = (): number => svc.requests.filter((r) => r.path === '/v2/parcels/confirm').length;
    const run = async (): Promise<void> => {
      const child: CliChild = startCli(['run', '-c', w.configFile], {}, w.dir);
      cleanups.push(() => child.kill('SIGKILL'));
      const before = confirms();
      // Placed and confirmed, then a cycle that sees it still ready and confirms again.
      await eventually(() => confirms() >= before + 2, 20_000, 'two confirms');
      child.kill('SIGTERM');
      expect((await child.exited).code).toBe(0);
    };
    await run();
    expect(fs.readdirSync(w.inbox)).toEqual(['po.x12']);
    await run();
    expect(fs.readdirSync(w.inbox)).toEqual(['po.x12']);
    expect(svc.requests.filter((r) => r.path === '/v2/parcels/download')).toHaveLength(1);
  });
});
