// Issue #6: the unit files must pass `systemd-analyze verify` (skipped with a notice where the tool is missing).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../helpers/journal-child.js';

const available = spawnSync('systemd-analyze', ['--version']).status === 0;
if (!available) console.log('NOTICE: systemd-analyze not found; the unit files are not verified here');

const verify = (file: string) => spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8' });

describe.skipIf(!available)('systemd units', () => {
  it.each(['gridsync.service', 'gridsync@.service'])('%s passes systemd-analyze verify without warnings', (unit) => {
    const r = verify(path.join(repoRoot, 'systemd', unit));
    expect(r.stderr.trim()).toBe('');
    expect(r.status).toBe(0);
  });

  it('the check notices a broken unit (unknown key)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-unit-'));
    const broken = path.join(dir, 'gridsync.service');
    fs.writeFileSync(broken, fs.readFileSync(path.join(repoRoot, 'systemd/gridsync.service'), 'utf8').replace('ProtectSystem=strict', 'ProtectSystm=strict'));
    const r = verify(broken);
    fs.rmSync(dir, { recursive: true, force: true });
    expect(r.stderr).toMatch(/ProtectSystm/);
  });

  it('keeps the hardening the README promises', () => {
    const unit = fs.readFileSync(path.join(repoRoot, 'systemd/gridsync.service'), 'utf8');
    for (const line of ['Restart=on-failure', 'ProtectSystem=strict', 'NoNewPrivileges=yes', 'PrivateTmp=yes', 'ProtectHome=yes', 'LoadCredential=gridsync-api-key:', 'ReadWritePaths=']) {
      expect(unit).toContain(line);
    }
    expect(unit).not.toMatch(/^MemoryDenyWriteExecute=yes/m);
  });
});
