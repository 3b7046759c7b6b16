/** A URL as it may be shown: a password written inside it (`https://user:secret@host`) is masked. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (!u.password && !u.username) return url;
    if (u.password) u.password = '***';
    return u.toString().replace(/\/$/, url.endsWith('/') ? '/' : '');
  } catch {
    return url.replace(/\/\/([^/@\s:]*):[^/@\s]*@/, '//$1:***@');
  }
}
