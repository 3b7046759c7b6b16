/**
 * Exactly one registration per mailbox on the service: ours are recognised by the mailbox id and
 * path secret at the end of their URL (so a changed public URL is still ours); the oldest of ours
 * is kept and brought up to date, any other of ours removed, one created when there is none.
 * Registrations that are not ours (another system's webhooks) are never touched.
 */
import { CallbackSetupError } from './errors.js';
import type { CallbackCredentials } from './credentials.js';
import type { CallbackRegistry, Registration } from './registry.js';
import { callbackUrl, isOwnUrl } from './verify.js';

export interface RegistrationPlan {
  /** The registration kept and updated, or undefined: create one. */
  readonly keep: Registration | undefined;
  /** Our other registrations of this mailbox. */
  readonly remove: readonly Registration[];
}

/** What to do with a mailbox's registrations (pure). */
export function planRegistration(existing: readonly Registration[], mailboxId: number, pathSecret: string): RegistrationPlan {
  const own = existing
    .filter((r) => r.event === 'Parcel' && isOwnUrl(r.url, mailboxId, pathSecret))
    .sort((a, b) => a.callbackId - b.callbackId);
  return { keep: own[0], remove: own.slice(1) };
}

export interface Registered {
  readonly mailboxId: number;
  readonly callbackId: number;
  readonly url: string;
  /** What changed: created, updated (URL differed), kept (as it was), plus stale ones removed. */
  readonly action: 'created' | 'updated' | 'kept';
  readonly removed: readonly number[];
}

/** Makes the service hold exactly one registration of ours for the mailbox, calling `publicUrl`. */
export async function ensureRegistration(
  registry: CallbackRegistry,
  creds: CallbackCredentials,
  publicUrl: string,
  mailboxId: number,
): Promise<Registered> {
  const secret = creds.pathSecrets.get(mailboxId);
  if (secret === undefined) throw new CallbackSetupError(`no callback path secret for mailbox ${mailboxId}`);
  const url = callbackUrl(publicUrl, mailboxId, secret);
  const plan = planRegistration(await registry.list(mailboxId), mailboxId, secret);
  const removed: number[] = [];
  for (const r of plan.remove) {
    await registry.remove(r.callbackId);
    removed.push(r.callbackId);
  }
  if (!plan.keep) {
    const made = await registry.create(mailboxId, url, creds);
    return { mailboxId, callbackId: made.callbackId, url, action: 'created', removed };
  }
  // Always sent: the service cannot show the password it holds, and the operator may have changed it.
  await registry.update(plan.keep.callbackId, url, creds);
  return { mailboxId, callbackId: plan.keep.callbackId, url, action: plan.keep.url === url ? 'kept' : 'updated', removed };
}

/** Removes every registration of ours for the mailbox; the ids removed. */
export async function removeRegistrations(registry: CallbackRegistry, creds: CallbackCredentials, mailboxId: number): Promise<number[]> {
  const secret = creds.pathSecrets.get(mailboxId);
  if (secret === undefined) return [];
  const plan = planRegistration(await registry.list(mailboxId), mailboxId, secret);
  const ours = [...(plan.keep ? [plan.keep] : []), ...plan.remove];
  for (const r of ours) await registry.remove(r.callbackId);
  return ours.map((r) => r.callbackId);
}
