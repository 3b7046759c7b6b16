// A self-signed key and certificate for 127.0.0.1, made with openssl, for tests that need an https
// peer on loopback (callback receivers, the TLS check of the soak). Plain .mjs: the soak imports it.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** Writes key.pem and cert.pem into `dir`; returns their contents, or undefined when openssl is missing. */
export function selfSignedCert(dir) {
  const keyFile = path.join(dir, 'key.pem');
  const certFile = path.join(dir, 'cert.pem');
  try {
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=127.0.0.1'],
      { stdio: 'ignore' },
    );
  } catch {
    return undefined;
  }
  return { key: fs.readFileSync(keyFile), cert: fs.readFileSync(certFile) };
}
