// Every entry of the outbox ends in sentDir or errorDir — and an entry that cannot get there must
// not be tried again after every scan for ever, writing one more report each time. The error folder
// may sit on another filesystem (a share the ERP reads): a FIFO cannot cross filesystems (only a
// rename moves one), so its move failed at every rescan, and each try wrote a new report under a
// new name (pipe.x12.error.json, pipe.<id>.x12.error.json, …): ~2,880 a day at the default rescan.
// And a file that vanished before its claim could never be reported when an earlier file of the
// same name had left its report there (the report's name was taken: the same failure at every try).
// An error folder that cannot be written at all showed as one rejection, then nothing: no deferred
// count, no stuck mailbox, only a warning per scan.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { Journal, OutboundJournal } from '../../../src/journal/index.js';
import type { OutboundPipeline } from '../../../src/outbound/index.js';
import { startCli } from '../../helpers/daemon-child.js';
import { recorder } from '../../helpers/log-recorder.js';
import { makeDaemonWorld } from '../../helpers/daemon-config.js';
import { x12 } from '../../helpers/edi.js';
import { beforeRename, entryOf, expectHooksFired } from '../../helpers/rename-hook.js';
import { listFiles, makeWorld, outboundPipeline, type TestWorld } from '../../helpers/world.js';
import { canPinFiles, pin, prerequisite } from '../../helpers/require-tool.js';

let w: TestWorld;
let errorDir: string;
/** A tmpfs, so that errorDir is on another filesystem than the state folder's processing/. */
const OTHER_FS = '/dev/shm';

const otherFilesystem = prerequisite(
  `${OTHER_FS} on another filesystem than ${os.tmpdir()}`,
  fs.existsSync(OTHER_FS) && fs.statSync(OTHER_FS).dev !== fs.statSync(os.tmpdir()).dev,
  'an error folder on another filesystem is not tested',
);

beforeEach(async () => {
  w = await makeWorld();
  errorDir = otherFilesystem ? fs.mkdtempSync(path.join(OTHER_FS, 'gridsync-error-')) : '';
});
afterEach(async () => {
  expectHooksFired();
  await w.close();
  if (errorDir) fs.rmSync(errorDir, { recursive: true, force: true });
});

const pipeline = (): OutboundPipeline => outboundPipeline(w, { stableMs: 20, errorDir });
const rows = async (): Promise<unknown[]> =>
  (await new OutboundJournal(w.journal).inStates(1001, w.dirs.outbox, ['erroring', 'in_error'])).map((r) => [r.file_name, r.state]);

describe.skipIf(!otherFilesystem)('an error folder on another filesystem', () => {
  it('a FIFO dropped in the outbox ends with one report saying it was removed, not with a report per rescan', async () => {
    execFileSync('mkfifo', [path.join(w.dirs.outbox, 'pipe.x12')]);
    fs.writeFileSync(path.join(w.dirs.outbox, 'fine.x12'), x12(1));
    const p = pipeline();
    for (let scan = 0; scan < 4; scan++) await p.runCycle();
    expect(listFiles(w.dirs.sent)).toEqual(['fine.x12']);
    expect(listFiles(errorDir)).toEqual(['pipe.x12.error.json']);
    const report = JSON.parse(fs.readFileSync(path.join(errorDir, 'pipe.x12.error.json'), 'utf8'));
    expect(report.reason).toMatch(/FIFO.*removed/);
    expect(await rows()).toEqual([['pipe.x12', 'in_error']]);
    expect(listFiles(w.dirs.outbox)).toEqual([]);
    expect(listFiles(path.join(w.dirs.state, 'processing'))).toEqual([]);
  });

  it('a file that vanished before its claim is reported beside the report an earlier file of its name left', async () => {
    fs.writeFileSync(path.join(errorDir, 'gone.x12.error.json'), '{"file":"gone.x12","reason":"an earlier one"}\n');
    fs.writeFileSync(path.join(w.dirs.outbox, 'gone.x12'), x12(2));
    beforeRename('claim of gone.x12', entryOf(w.dirs.outbox, 'gone.x12'), (src) => fs.rmSync(src));
    const p = pipeline();
    for (let scan = 0; scan < 3; scan++) await p.runCycle();
    expect(await rows()).toEqual([['gone.x12', 'in_error']]);
    const reports = listFiles(errorDir);
    expect(reports).toHaveLength(2);
    expect(reports).toContain('gone.x12.error.json');
    const ours = reports.find((f) => f !== 'gone.x12.error.json') as string;
    expect(JSON.parse(fs.readFileSync(path.join(errorDir, ours), 'utf8')).reason).toMatch(/vanished/);
  });
});

describe('an error folder that cannot be written', () => {
  it('shows as deferred work at every try, not as one rejection and then silence', async () => {
    // A file where the folder must be: the move fails whoever runs the test (root ignores modes).
    const blocked = path.join(w.root, 'error-blocked');
    fs.writeFileSync(blocked, 'not a folder');
    fs.writeFileSync(path.join(w.dirs.outbox, 'nowhere.x12'), x12(3).replace('DEMOPARTNER    ', 'NOBODY         '));
    const p = outboundPipeline(w, { stableMs: 20, errorDir: blocked });
    expect(await p.runCycle()).toMatchObject({ failed: 1 });
    for (let scan = 0; scan < 2; scan++) expect(await p.runCycle()).toMatchObject({ deferred: 1 });
    expect(await rows()).toEqual([['nowhere.x12', 'erroring']]);
  });
});

const canPin = prerequisite(
  'chattr +i (root, a filesystem with the immutable attribute)',
  canPinFiles(),
  'an outbox file that cannot be claimed is not checked for a report at every rescan',
);

// Round 5: an outbox file no rename can move (immutable; another user's file in a sticky outbox)
// was claimed again at every rescan: a journal row and a report each time (~2,880 a day at the
// default rescan), each report naming a file in errorDir that is not there.
// Round 6: its report's reason read "cannot move to the error folder: … EPERM" and the log said
// "file moved to the error folder" with an errorFile that was not there, while the file stayed in
// the outbox; with errorDir on another filesystem a copy of it was left in errorDir beside the
// original, under another name than its report.
describe.skipIf(!canPin)('an outbox file that cannot be claimed', () => {
  /** Scans until the file is reported; checks the report, the log line, and that the file is in the outbox only. */
  async function expectReportedInPlace(errorFolder: string): Promise<void> {
    const pinned = path.join(w.dirs.outbox, 'pinned.x12');
    fs.writeFileSync(pinned, x12(4));
    pin(true, pinned);
    try {
      const log = recorder();
      const p = outboundPipeline(w, { stableMs: 20, errorDir: errorFolder }, { logger: log });
      for (let scan = 0; scan < 4; scan++) await p.runCycle();
      expect(listFiles(errorFolder)).toEqual(['pinned.x12.error.json']);
      const report = JSON.parse(fs.readFileSync(path.join(errorFolder, 'pinned.x12.error.json'), 'utf8'));
      expect(report.errorCode).toBe('OUTBOUND_FILE_UNMOVABLE');
      // It names the file where it is, in the outbox, not as a descriptor path, and says it stays there.
      expect(report.reason).toContain(pinned);
      expect(report.reason).not.toContain('/proc/self/fd');
      expect(report.reason).toContain('EPERM');
      expect(report.reason).toMatch(/stays in the outbox/);
      // Nothing is in errorDir to requeue: no command that names a file not there.
      expect(report.requeue).toBeNull();
      const told = log.lines.filter((l) => l.obj.file === 'pinned.x12' && l.level !== 'debug');
      expect(told.map((l) => [l.level, l.obj.errorCode, l.obj.outboxFile, l.obj.errorFile])).toEqual([
        ['error', 'OUTBOUND_FILE_UNMOVABLE', pinned, undefined],
      ]);
      expect(JSON.stringify(told)).not.toContain('/proc/self/fd');
      expect(await rows()).toEqual([['pinned.x12', 'in_error']]);
      expect(listFiles(w.dirs.outbox)).toEqual(['pinned.x12']);
      pin(false, pinned);
      for (let scan = 0; scan < 4 && listFiles(w.dirs.sent).length === 0; scan++) await p.runCycle();
      expect(listFiles(w.dirs.sent)).toEqual(['pinned.x12']);
    } finally {
      pin(false, pinned);
    }
  }

  it('is reported once, left in the outbox, and claimed once it can be', () => expectReportedInPlace(w.dirs.error));

  it.skipIf(!otherFilesystem)('with errorDir on another filesystem, leaves no copy of it there', () => expectReportedInPlace(errorDir));
});

// Round 5: a try killed after the report was written and before its file followed (the one errorDir
// fsync comes after the move) left the report alone; the next run put the file and a second report
// under another name, and the first report described a file that was never there.
describe('gridsync killed between the error report and the move of its file', () => {
  it('the next run puts the file beside that report', async () => {
    const d = makeDaemonWorld({}, { inbox: undefined });
    try {
      fs.mkdirSync(d.outbox, { recursive: true });
      const empty = path.join(d.outbox, 'empty.x12'); // refused: an empty file
      fs.writeFileSync(empty, '');
      const old = new Date(Date.now() - 60_000);
      fs.utimesSync(empty, old, old);
      const killed = startCli(['once', '-c', d.configFile], { GRIDSYNC_PAUSE_AT: 'out.error-report-written:1' }, d.dir);
      await killed.waitFor(/pause point out\.error-report-written reached/, 30_000);
      killed.kill('SIGKILL');
      await killed.exited;
      expect(fs.readdirSync(d.error)).toEqual(['empty.x12.error.json']);

      await startCli(['once', '-c', d.configFile], {}, d.dir).exited;
      expect(fs.readdirSync(d.error).sort()).toEqual(['empty.x12', 'empty.x12.error.json']);
      const report = JSON.parse(fs.readFileSync(path.join(d.error, 'empty.x12.error.json'), 'utf8'));
      expect(report.requeue).toMatch(/ \S*\/error\/empty\.x12$/);
    } finally {
      d.cleanup();
    }
  }, 60_000);
});

// Operators, round 7: a try killed once the file had followed its report, before the journal heard
// of it, left both in place; the next run took the name for another file's, wrote a second report
// under another name with no file beside it, logged "file moved to the error folder" naming that
// absent file, and journalled it as the file's place. A copy into an errorDir on another
// filesystem cut short (the source still whole) was kept beside a second, whole copy.
describe('gridsync killed while a refused file goes into errorDir', () => {
  /** The entries of errorDir, the row's journalled place, and the error lines about a file of a second run. */
  async function rerun(d: ReturnType<typeof makeDaemonWorld>, errorFolder: string) {
    const second = await startCli(['once', '-c', d.configFile], {}, d.dir).exited;
    const lines = second.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.level === 50 && l.file !== undefined);
    const journal = Journal.open(path.join(d.state, 'journal.sqlite'), { readonly: true });
    try {
      const rows = journal.db.prepare('SELECT state, final_path FROM outbound_files').all();
      return { entries: fs.readdirSync(errorFolder).sort(), rows, lines };
    } finally {
      await journal.close();
    }
  }

  it('after the move: the next run journals the file where it is, with no second report', async () => {
    const d = makeDaemonWorld({}, { inbox: undefined });
    try {
      fs.mkdirSync(d.outbox, { recursive: true });
      fs.writeFileSync(path.join(d.outbox, 'empty.x12'), ''); // refused: an empty file
      const killed = startCli(['once', '-c', d.configFile], { GRIDSYNC_PAUSE_AT: 'out.error-moved:1' }, d.dir);
      await killed.waitFor(/pause point out\.error-moved reached/, 30_000);
      killed.kill('SIGKILL');
      await killed.exited;
      expect(fs.readdirSync(d.error).sort()).toEqual(['empty.x12', 'empty.x12.error.json']);

      const after = await rerun(d, d.error);
      expect(after.entries).toEqual(['empty.x12', 'empty.x12.error.json']);
      expect(after.rows).toEqual([{ state: 'in_error', final_path: path.join(d.error, 'empty.x12') }]);
      expect(after.lines.map((l) => [l.msg, l.errorFile])).toEqual([['file moved to the error folder', path.join(d.error, 'empty.x12')]]);
    } finally {
      d.cleanup();
    }
  }, 60_000);

  it.skipIf(!otherFilesystem)(
    'during a copy across filesystems: the next run copies it whole, under its report',
    async () => {
      const d = makeDaemonWorld({}, { inbox: undefined });
      const outbox = { dir: './outbox', sentDir: './sent', errorDir, stableMs: '100ms', rescanMs: '500ms' };
      const cfg = YAML.parse(fs.readFileSync(d.configFile, 'utf8')) as { mailboxes: Record<string, unknown>[] };
      (cfg.mailboxes[0] as Record<string, unknown>).outbox = outbox;
      fs.writeFileSync(d.configFile, YAML.stringify(cfg));
      try {
        fs.mkdirSync(d.outbox, { recursive: true });
        const content = `not an interchange ${'x'.repeat(4000)}\n`; // refused: no X12 or EDIFACT envelope
        fs.writeFileSync(path.join(d.outbox, 'bad.x12'), content);
        const killed = startCli(['once', '-c', d.configFile], { GRIDSYNC_PAUSE_AT: 'out.error-report-written:1' }, d.dir);
        await killed.waitFor(/pause point out\.error-report-written reached/, 30_000);
        killed.kill('SIGKILL');
        await killed.exited;
        // What a kill in the middle of the copy leaves: the first bytes under the report's name.
        fs.writeFileSync(path.join(errorDir, 'bad.x12'), content.slice(0, 100));

        const after = await rerun(d, errorDir);
        expect(after.entries).toEqual(['bad.x12', 'bad.x12.error.json']);
        expect(fs.readFileSync(path.join(errorDir, 'bad.x12'), 'utf8')).toBe(content);
        expect(after.rows).toEqual([{ state: 'in_error', final_path: path.join(errorDir, 'bad.x12') }]);
      } finally {
        d.cleanup();
      }
    },
    60_000,
  );
});
