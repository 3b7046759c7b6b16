// `inbox.fileMode` as an operator writes it. Unquoted, YAML reads 0640 as the decimal number 640,
// and gridsync took that number for the mode: the received file came out as 0o1200 (--w------T),
// which the ERP cannot read, with no word in the log. A mode is now read as octal however it is
// written, and a number that is no mode is refused naming the key.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeDaemonWorld, seedEmbeddedService, type DaemonWorld } from '../../helpers/daemon-config.js';
import { runCli } from '../../helpers/daemon-child.js';

const worlds: DaemonWorld[] = [];
afterEach(() => worlds.splice(0).forEach((w) => w.cleanup()));

/** A world with one parcel waiting, its config's inbox given `fileMode` exactly as `written`. */
async function worldWithMode(written: string): Promise<DaemonWorld> {
  const w = makeDaemonWorld();
  worlds.push(w);
  await seedEmbeddedService(w, [{ fileName: 'order.edi', content: 'UNA:+.? ' }]);
  const text = fs.readFileSync(w.configFile, 'utf8');
  const withMode = text.replace(/^( +)dir: \.\/inbox$/m, (line, indent: string) => `${line}\n${indent}fileMode: ${written}`);
  expect(withMode).not.toBe(text);
  fs.writeFileSync(w.configFile, withMode);
  return w;
}

describe('inbox.fileMode in the config file', () => {
  it.each(['0640', '"0640"', '640', '0o640'])('fileMode: %s gives the received file mode 0640', async (written) => {
    const w = await worldWithMode(written);
    const r = runCli(['once', '-c', w.configFile, '--quiet']);
    expect(r.status, r.stderr).toBe(0);
    const mode = fs.statSync(path.join(w.inbox, 'order.edi')).mode & 0o7777;
    expect(mode.toString(8)).toBe('640');
  });

  it.each(['999', '0o7640'])('fileMode: %s is refused, naming the key', async (written) => {
    const w = await worldWithMode(written);
    const r = runCli(['once', '-c', w.configFile]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/mailboxes\[0\]\.inbox\.fileMode: expected an octal mode such as "0640"/);
    expect(r.stderr).toContain('[CONFIG_INVALID]');
    expect(fs.existsSync(path.join(w.inbox, 'order.edi'))).toBe(false);
  });
});
