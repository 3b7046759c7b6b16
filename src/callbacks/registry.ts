/**
 * The service's callback registrations, as the registration logic needs them. Over REST through
 * the endpoint catalog: the service has no "list callbacks" call, so registrations are read from
 * the delivery queue, which holds one entry per registration.
 */
import { catalog, type GridClient } from '../api/index.js';
import type { CallbackAuthScheme } from './credentials.js';

export interface Registration {
  readonly callbackId: number;
  readonly url: string;
  readonly mailboxId: number | null;
  readonly event: string;
}

export interface CallbackAuth {
  readonly auth: CallbackAuthScheme;
  readonly username: string;
  readonly password: string;
}

/** The service's `httpAuthType` for a scheme of ours. */
const HTTP_AUTH_TYPE = { basic: 'Basic', digest: 'Digest' } as const satisfies Record<CallbackAuthScheme, string>;

export interface TestResult {
  readonly httpStatus: number;
  readonly responseBody: string | null;
}

export interface CallbackRegistry {
  /** Registrations scoped to `mailboxId`. */
  list(mailboxId: number): Promise<Registration[]>;
  create(mailboxId: number, url: string, auth: CallbackAuth): Promise<Registration>;
  /** Sets the URL and credentials of a registration (the service cannot show the password it holds). */
  update(callbackId: number, url: string, auth: CallbackAuth): Promise<void>;
  remove(callbackId: number): Promise<void>;
  /** Has the service call the registration once; what the receiver answered. */
  test(callbackId: number): Promise<TestResult>;
}

const toRegistration = (r: { callbackId: number; url: string; mailboxId?: number | null | undefined; event: string }): Registration => ({
  callbackId: r.callbackId,
  url: r.url,
  mailboxId: r.mailboxId ?? null,
  event: r.event,
});

/** The registry over the REST client. */
export function restRegistry(client: GridClient): CallbackRegistry {
  const cb = catalog.callbacks;
  return {
    list: async (mailboxId) => {
      const out: Registration[] = [];
      for await (const row of client.paginate(cb.queueList, { mailboxId })) {
        if (row.mailboxId === mailboxId) out.push(toRegistration(row));
      }
      return out;
    },
    create: async (mailboxId, url, auth) =>
      toRegistration(
        await client.call(cb.create, {
          url,
          event: 'Parcel',
          mailboxId,
          httpAuthType: HTTP_AUTH_TYPE[auth.auth],
          username: auth.username,
          password: auth.password,
        }),
      ),
    update: async (callbackId, url, auth) => {
      await client.call(cb.update, {
        callbackId,
        url,
        status: 'Active',
        httpAuthType: HTTP_AUTH_TYPE[auth.auth],
        username: auth.username,
        password: auth.password,
      });
    },
    remove: async (callbackId) => {
      await client.call(cb.delete, { callbackId });
    },
    test: async (callbackId) => {
      const r = await client.call(cb.test, { callbackId });
      return { httpStatus: r.httpStatus, responseBody: r.responseBody ?? null };
    },
  };
}
