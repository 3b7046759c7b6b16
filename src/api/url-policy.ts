/**
 * Where the client may send credentials: https:// anywhere, plain http:// only to this machine
 * (loopback) unless the operator opts in. One rule for the REST client, the SOAP client and config
 * validation, so an address the config accepts is never refused when the client starts.
 */

/** A host name on this machine: `localhost`, any 127.0.0.0/8 address, `::1`. */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost' || h === '::1') return true;
  const m = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(h);
  return m !== null && m.slice(1).every((octet) => Number(octet) <= 255);
}

/**
 * Why the client refuses a service address, or undefined when it accepts it: only http(s), and
 * plain http only to a loopback host or with `allowInsecureHttp`.
 */
export function serviceUrlProblem(url: URL, allowInsecureHttp: boolean): string | undefined {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `unsupported URL scheme ${url.protocol}`;
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname) && !allowInsecureHttp)
    return `plain http:// to ${url.hostname} is refused (credentials and EDI content would cross the network in clear text); use https://, or set api.allowInsecureHttp: true`;
  return undefined;
}
