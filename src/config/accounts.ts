/**
 * Users and groups as the system resolves them (`getent`, i.e. NSS): a group that lives in LDAP or
 * sssd is found like one in /etc/group, which reading that file alone would miss.
 */
import { execFileSync } from 'node:child_process';

/** The entry `getent DB KEY` prints (`name:x:id:…`), or undefined when there is none (or no getent). */
function getent(db: 'group' | 'passwd', key: string): string[] | undefined {
  try {
    const line = execFileSync('getent', [db, key], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 10_000 });
    return line.split('\n')[0]?.split(':');
  } catch {
    return undefined;
  }
}

/** The gid of the group named `name`, or undefined when the system knows no such group. */
export function groupId(name: string): number | undefined {
  const gid = getent('group', name)?.[2];
  return gid === undefined || gid === '' ? undefined : Number(gid);
}

const names = new Map<string, string | undefined>();

/** The name of user or group `id` (`ls -l` style), or undefined when it has none. */
export function accountName(db: 'group' | 'passwd', id: number): string | undefined {
  const key = `${db}:${id}`;
  if (!names.has(key)) names.set(key, getent(db, String(id))?.[0]);
  return names.get(key);
}
