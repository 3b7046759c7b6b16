// `gridsync emulator --seed FILE` with a seed file that is wrong: each refused key named as it is
// written (`mailboxes[0].mailboxId`) with what it takes, in the words the daemon's config errors
// use, exit 2 with EMULATOR_SEED and no stack trace. Before: zod's own words for the first problem
// only ("networks.0.networkId: Invalid input: expected number, received undefined"); YAML that does
// not parse and an id given twice came out as bugs (exit 3, the parser's or SQLite's words).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cliPath, startCli } from '../../helpers/daemon-child.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

function emulatorWithSeed(text: string, extra: (dir: string) => string[] = () => []) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-seed-'));
  dirs.push(dir);
  const seed = path.join(dir, 'seed.yaml');
  fs.writeFileSync(seed, text);
  const r = spawnSync(process.execPath, [cliPath, 'emulator', '--port', '0', '--seed', seed, ...extra(dir)], {
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { status: r.status, stderr: r.stderr.replaceAll(seed, 'SEED').replaceAll(dir, 'DIR') };
}

const NETWORK = '  - { networkId: 1, uniqueId: N, companyName: Net }';

/** Refused with exit 2, and these lines under `seed FILE is invalid:`, the code after the last. */
function expectInvalid(r: { status: number | null; stderr: string }, problems: string[]): void {
  expect(r.status).toBe(2);
  expect(r.stderr).toBe(`gridsync: seed SEED is invalid:\n${problems.map((p) => `  ${p}`).join('\n')} [EMULATOR_SEED]\n`);
}

describe('emulator seed file errors', () => {
  it('name every refused key as written, with what it takes', () => {
    const r = emulatorWithSeed(
      [
        'networks:',
        '  - { uniqueId: N, companyName: Net }',
        'mailboxes:',
        '  - { mailboxId: "x", networkId: 1, uniqueId: WAYTOOLONGFORIT, companyName: Ours }',
        'gridIds: []',
        'users:',
        '  - { userId: 1, login: a, authLevel: Boss, networkId: 1, mailboxId: 1 }',
        'mailbox: []',
      ].join('\n'),
    );
    expectInvalid(r, [
      'networks[0].networkId: missing: this key is required',
      'mailboxes[0].mailboxId: expected a whole number, got "x"',
      'mailboxes[0].uniqueId: at most 12 characters',
      'users[0].authLevel: expected one of Root, TechOps, NetOps, NetworkAdmin, NetworkUser, MailboxAdmin, MailboxUser, TPUser, General, got "Boss"',
      '(top level): Unrecognized key mailbox — did you mean mailboxes?',
    ]);
  });

  it('YAML that does not parse, an empty file, an id given twice, a grid ID of no mailbox: exit 2 with the key, not a bug', () => {
    const yaml = emulatorWithSeed('networks: [\n');
    expect(yaml.status).toBe(2);
    expect(yaml.stderr).toMatch(/^gridsync: seed SEED: not valid YAML: .* at line 2, column 1 \[EMULATOR_SEED\]\n$/);

    expectInvalid(emulatorWithSeed(''), ['(top level): expected a section, got nothing']);

    const twice = emulatorWithSeed(
      [
        'networks:',
        NETWORK,
        'mailboxes:',
        '  - { mailboxId: 7, networkId: 1, uniqueId: A, companyName: A }',
        '  - { mailboxId: 7, networkId: 1, uniqueId: B, companyName: B }',
        'gridIds:',
        '  - { gridId: 1, mailboxId: 9, qualifier: ZZ, id: X }',
        'users:',
        '  - { userId: 1, login: a, authLevel: Root, networkId: 1, mailboxId: 7, apiKey: secret-one }',
        '  - { userId: 2, login: b, authLevel: MailboxUser, networkId: 1, mailboxId: 7, apiKey: secret-one }',
      ].join('\n'),
    );
    expectInvalid(twice, [
      "mailboxes[1].mailboxId: the same as mailboxes[0]'s: it must be unique",
      "users[1].apiKey: the same as users[0]'s: it must be unique",
      "gridIds[0].mailboxId: no mailbox 9 among the seed's mailboxes",
    ]);
    expect(twice.stderr).not.toContain('secret-one');
  });

  it('an unknown key inside an entry, at any depth, is named with its entry: it was dropped silently', () => {
    expectInvalid(
      emulatorWithSeed(
        [
          'networks:',
          '  - { networkId: 1, uniqueId: N, companyName: Net, contacts: [{ contactType: Owner, nmae: Dana }] }',
          'mailboxes:',
          '  - { mailboxId: 7, networkId: 1, uniqueId: A, companyName: A, autoAcknowlege: true }',
          'gridIds: []',
          'users:',
          '  - { userId: 1, login: a, authLevel: Root, networkId: 1, mailboxId: 7, apikey: k-1 }',
        ].join('\n'),
      ),
      [
        'networks[0].contacts[0]: Unrecognized key nmae — did you mean name?',
        'mailboxes[0]: Unrecognized key autoAcknowlege — did you mean autoAcknowledge?',
        'users[0]: Unrecognized key apikey — did you mean apiKey?',
      ],
    );
  });

  it("a root key for two Root users (in the seed, then in a data file): exit 2 naming them, not SQLite's words as a bug", async () => {
    const seed = [
      'networks:',
      NETWORK,
      'mailboxes:',
      '  - { mailboxId: 7, networkId: 1, uniqueId: A, companyName: A }',
      'gridIds: []',
      'users:',
      '  - { userId: 1, login: a, authLevel: Root, networkId: 1, mailboxId: 7, apiKey: root-one-key }',
      '  - { userId: 2, login: b, authLevel: Root, networkId: 1, mailboxId: 7, apiKey: root-two-key }',
      '  - { userId: 3, login: c, authLevel: MailboxUser, networkId: 1, mailboxId: 7, apiKey: new-root-key-0123456789 }',
    ].join('\n');
    const keyFile = (dir: string): string[] => {
      fs.writeFileSync(path.join(dir, 'root.key'), 'new-root-key-0123456789\n');
      return ['--root-key-file', path.join(dir, 'root.key')];
    };
    const refused = emulatorWithSeed(seed, keyFile);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toBe(
      'gridsync: seed SEED cannot take the root key (--root-key-file, --root-key), which becomes the API key of every Root user, and keys are unique:\n' +
        '  users[0], users[1]: 2 Root users: keep one in the seed\n' +
        '  users[2].apiKey: the same as the root key: it must be unique [EMULATOR_SEED]\n',
    );
    expect(refused.stderr).not.toContain('new-root-key');

    // Seeded without a root key into a data file, then started on it with one.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-seed-'));
    dirs.push(dir);
    fs.writeFileSync(path.join(dir, 'seed.yaml'), seed.split('\n').slice(0, -1).join('\n'));
    const data = path.join(dir, 'emulator.sqlite');
    const first = startCli(['emulator', '--port', '0', '--seed', path.join(dir, 'seed.yaml'), '--data', data]);
    await first.waitFor(/listening on/);
    first.kill('SIGTERM');
    expect((await first.exited).code).toBe(0);
    const again = spawnSync(process.execPath, [cliPath, 'emulator', '--port', '0', '--data', data, ...keyFile(dir)], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(again.status).toBe(2);
    expect(again.stderr.replaceAll(data, 'DATA')).toBe(
      'gridsync: data file DATA cannot take the root key (--root-key-file, --root-key), which becomes the API key of every Root user, and keys are unique:\n' +
        '  user 1, user 2: 2 Root users: start without a root key (they keep their keys) [EMULATOR_CONFIG]\n',
    );
  });

  it('a root key for a seed with no Root user (then for such a data file): refused by name, it was silently unused', async () => {
    // The root key is the key of the seed's Root user and the key remote admin routes take: with
    // no Root user it is nobody's, and an emulator started with it answers 401 to that key.
    const seed = [
      'networks:',
      NETWORK,
      'mailboxes:',
      '  - { mailboxId: 7, networkId: 1, uniqueId: A, companyName: A }',
      'gridIds: []',
      'users:',
      '  - { userId: 1, login: a, authLevel: NetworkAdmin, networkId: 1, mailboxId: 7, apiKey: admin-key }',
    ].join('\n');
    const keyFile = (dir: string): string[] => {
      fs.writeFileSync(path.join(dir, 'root.key'), 'lonely-root-key-0123456789\n');
      return ['--root-key-file', path.join(dir, 'root.key')];
    };
    const refused = emulatorWithSeed(seed, keyFile);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/^gridsync: seed SEED has no Root user[^\n]*\[EMULATOR_SEED\]\n$/);
    expect(refused.stderr).not.toContain('lonely-root-key');

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-seed-'));
    dirs.push(dir);
    fs.writeFileSync(path.join(dir, 'seed.yaml'), seed);
    const data = path.join(dir, 'emulator.sqlite');
    const first = startCli(['emulator', '--port', '0', '--seed', path.join(dir, 'seed.yaml'), '--data', data]);
    await first.waitFor(/listening on/);
    first.kill('SIGTERM');
    expect((await first.exited).code).toBe(0);
    const again = spawnSync(process.execPath, [cliPath, 'emulator', '--port', '0', '--data', data, ...keyFile(dir)], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(again.status).toBe(2);
    expect(again.stderr.replaceAll(data, 'DATA')).toMatch(/^gridsync: data file DATA has no Root user[^\n]*\[EMULATOR_CONFIG\]\n$/);
  });
});
