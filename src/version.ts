/** gridsync's version, from package.json, read on first use (no I/O at import time). */
import { createRequire } from 'node:module';

let cached: string | undefined;

export function gridsyncVersion(): string {
  cached ??= (createRequire(import.meta.url)('../package.json') as { version: string }).version;
  return cached;
}
