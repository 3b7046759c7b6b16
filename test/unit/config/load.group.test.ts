/** inbox.group names are resolved through the system (getent: NSS, so LDAP/sssd groups too), not by reading /etc/group. */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../../src/config/index.js';

const config = (group: string | number) => ({
  api: { baseUrl: 'https://grid.example.com', apiKey: 'k-123456' },
  stateDir: '/tmp/gs-state',
  mailboxes: [{ mailboxId: 1001, inbox: { dir: '/tmp/gs-in', group } }],
});

describe('inbox.group', () => {
  it('a name resolves to the gid the system gives for it', () => {
    const [name, , gid] = execFileSync('getent', ['group', '0'], { encoding: 'utf8' }).trim().split(':');
    expect(parseConfig(config(name as string), 't', {}, '/').gids).toEqual([Number(gid)]);
  });

  it('a numeric gid is taken as it is', () => {
    expect(parseConfig(config('4242'), 't', {}, '/').gids).toEqual([4242]);
  });

  it('an unknown name is refused, naming the key and how it was looked up', () => {
    expect(() => parseConfig(config('no-such-group-gs'), 't', {}, '/')).toThrow(ConfigError);
    expect(() => parseConfig(config('no-such-group-gs'), 't', {}, '/')).toThrow(
      /inbox\.group: the system knows no group named no-such-group-gs \(getent group/,
    );
  });
});
