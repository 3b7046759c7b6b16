/**
 * What the service must present to be believed: the user and password (Basic or Digest), and per mailbox
 * an unguessable path secret. The password comes from the operator (a systemd credential, else
 * `callbacks.passwordFile`) or is generated once; generated values are kept in the stateDir (mode
 * 0600) so a restart re-registers the same URL instead of piling up registrations.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/index.js';
import { holdSecrets } from '../errors/index.js';
import { CallbackSetupError } from './errors.js';

/** The systemd credential (LoadCredential=) that holds the callback password. */
export const CREDENTIAL_CALLBACK_PASSWORD = 'gridsync-callback-password';
/** The state file of generated callback secrets, inside stateDir. */
export const CALLBACK_STATE_FILE = 'callbacks.json';

/** How the service presents the credentials (`callbacks.auth`). */
export type CallbackAuthScheme = NonNullable<Config['callbacks']>['auth'];

export interface CallbackCredentials {
  readonly auth: CallbackAuthScheme;
  readonly username: string;
  readonly password: string;
  /** mailboxId → its path secret. */
  readonly pathSecrets: ReadonlyMap<number, string>;
}

interface StoredState {
  password?: string;
  paths?: Record<string, string>;
}

export interface CredentialSource {
  readonly stateDir: string;
  readonly auth: CallbackAuthScheme;
  readonly username: string;
  readonly passwordFile?: string | undefined;
  /** $CREDENTIALS_DIRECTORY under systemd. */
  readonly credentialsDir?: string | undefined;
  readonly mailboxIds: readonly number[];
}

const secret = (): string => randomBytes(24).toString('base64url');

function readOperatorPassword(src: CredentialSource): string | undefined {
  const cred = src.credentialsDir ? path.join(src.credentialsDir, CREDENTIAL_CALLBACK_PASSWORD) : undefined;
  const file = cred && fs.existsSync(cred) ? cred : src.passwordFile;
  if (file === undefined) return undefined;
  const value = fs.readFileSync(file, 'utf8').trim();
  if (!value) throw new CallbackSetupError(`${file}: the callback password file is empty`);
  return value;
}

function readState(file: string): StoredState {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as StoredState;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new CallbackSetupError(`${file}: cannot read the callback state (${(err as Error).message}); remove it to generate new secrets`, {
      cause: err,
    });
  }
}

function writeState(file: string, state: StoredState): void {
  const tmp = `${file}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  fs.chmodSync(tmp, 0o600);
  fs.renameSync(tmp, file);
}

/**
 * What `run` would refuse at start-up, checked without writing anything (doctor): an operator's
 * password file that is empty, a state file that cannot be read.
 */
export function checkCallbackCredentials(src: Omit<CredentialSource, 'mailboxIds' | 'auth'>): void {
  readState(path.join(src.stateDir, CALLBACK_STATE_FILE));
  readOperatorPassword({ ...src, auth: 'basic', mailboxIds: [] });
}

/** Loads the callback credentials, generating and keeping what is missing. */
export function loadCallbackCredentials(src: CredentialSource): CallbackCredentials {
  fs.mkdirSync(src.stateDir, { recursive: true });
  const file = path.join(src.stateDir, CALLBACK_STATE_FILE);
  const state = readState(file);
  const operator = readOperatorPassword(src);
  const paths = { ...state.paths };
  let changed = false;
  for (const id of src.mailboxIds) {
    if (!paths[String(id)]) {
      paths[String(id)] = secret();
      changed = true;
    }
  }
  const password = operator ?? state.password ?? secret();
  if (operator === undefined && state.password === undefined) changed = true;
  if (changed) writeState(file, { ...(operator === undefined ? { password } : {}), paths });
  // Every sink masks them from now on, even should the service echo one back.
  holdSecrets([password, ...Object.values(paths)]);
  return {
    auth: src.auth,
    username: src.username,
    password,
    pathSecrets: new Map(src.mailboxIds.map((id) => [id, paths[String(id)] as string])),
  };
}
