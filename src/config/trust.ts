/**
 * Whose files gridsync trusts, the way ssh treats its own: a config found implicitly in the working
 * directory is used only when the invoking user (or root) owns it and its folder and nobody else
 * can write them — otherwise root running `gridsync once` in another user's directory would run
 * that user's config (send the root-only key to their server, write as root where they choose).
 * Secret files readable by others, and configs others can write, are reported as warnings.
 */
import fs from 'node:fs';
import path from 'node:path';

const euid = (): number => (typeof process.geteuid === 'function' ? process.geteuid() : 0);
const egid = (): number => (typeof process.getegid === 'function' ? process.getegid() : 0);

/** Why `p` is not safe to trust as the invoking user's own, or undefined when it is. */
export function untrustedReason(p: string, uid = euid(), gid = egid()): string | undefined {
  let st: fs.Stats;
  try {
    st = fs.statSync(p);
  } catch (err) {
    return `cannot stat: ${(err as Error).message}`;
  }
  if (st.uid !== uid && st.uid !== 0) return `owned by uid ${st.uid}, not by you (uid ${uid}) or root`;
  if (st.mode & 0o002) return `writable by others (mode ${(st.mode & 0o777).toString(8).padStart(4, '0')})`;
  if (st.mode & 0o020 && st.gid !== gid) return `writable by group ${st.gid} (mode ${(st.mode & 0o777).toString(8).padStart(4, '0')})`;
  return undefined;
}

/**
 * An implicit config (found from the working directory): the file and every folder from the
 * working directory down to it must be trusted.
 */
export function implicitConfigProblem(file: string, cwd: string): string | undefined {
  const chain: string[] = [];
  for (let p = path.resolve(file); ; p = path.dirname(p)) {
    chain.push(p);
    if (p === path.resolve(cwd) || path.dirname(p) === p) break;
  }
  for (const p of chain) {
    const why = untrustedReason(p);
    if (why) return `${p} is ${why}`;
  }
  return undefined;
}

const modeText = (mode: number): string => (mode & 0o777).toString(8).padStart(4, '0');

/** A warning when a file holding a secret can be read by others (group access is how a service user reads it). */
export function secretFileWarning(file: string, what: string): string | undefined {
  try {
    const st = fs.statSync(file);
    if (st.mode & 0o004)
      return `${what} ${file} is readable by every user (mode ${modeText(st.mode)}); chmod 0600 (or 0640 with the service's group)`;
  } catch {
    // Unreadable files are reported where they are read.
  }
  return undefined;
}

/** Warnings for the config file itself: others can change it, or read a secret written in it. */
export function configFileWarnings(file: string, holdsSecret: boolean): string[] {
  const out: string[] = [];
  try {
    const st = fs.statSync(file);
    if (st.mode & 0o002)
      out.push(`config ${file} is writable by every user (mode ${modeText(st.mode)}): anyone could point gridsync elsewhere; chmod o-w`);
    if (holdsSecret && st.mode & 0o004)
      out.push(
        `config ${file} holds a secret (api.apiKey or api.password) and is readable by every user (mode ${modeText(st.mode)}); chmod 0640, or move the secret to api.apiKeyFile / a systemd credential`,
      );
  } catch {
    // Reported where it is read.
  }
  return out;
}
