/** Users (16). docs/wire.md#catalog. `GET /v2/users/me` tells the caller's default mailbox. */
import { z } from 'zod';
import { AuthLevel, IntId, pageRequest, Password, Status, UserIDInfo } from '../wire/index.js';
import { byId, defineGroup, PositiveId } from './endpoint.js';

const userId = PositiveId;

export const users = defineGroup('Users', 'users', {
  me: {
    method: 'GET',
    path: '/v2/users/me',
    request: z.object({}).loose(),
    response: UserIDInfo,
    summary: 'The calling user (learn the default mailboxId here).',
  },
  get: byId({
    path: '/v2/users/{userId}',
    response: UserIDInfo,
    summary: 'One user by id.',
  }),
  create: {
    method: 'POST',
    path: '/v2/users',
    request: z
      .object({
        login: z.string().min(1),
        password: Password,
        email: z.string().min(3),
        firstName: z.string().optional(),
        lastName: z.string().optional(),
        networkId: IntId.optional(),
        mailboxId: IntId.optional(),
        authLevel: AuthLevel.optional(),
      })
      .loose(),
    response: UserIDInfo,
    idempotent: false,
    minLevel: 'MailboxAdmin',
    summary: 'Create a user (default AuthLevel MailboxUser).',
  },
  update: {
    method: 'PUT',
    path: '/v2/users',
    aliases: [{ method: 'PUT', path: '/v2/users/{userId}' }],
    request: z.object({ userId, email: z.string().optional(), firstName: z.string().optional(), lastName: z.string().optional() }).loose(),
    response: UserIDInfo,
    summary: 'Change a user’s e-mail or name.',
  },
  delete: byId({
    method: 'DELETE',
    path: '/v2/users/{userId}',
    response: z.literal(true),
    minLevel: 'MailboxAdmin',
    summary: 'Delete a user.',
  }),
  list: {
    method: 'POST',
    path: '/v2/users/list',
    aliases: [{ method: 'GET', path: '/v2/users' }],
    request: pageRequest(500)
      .extend({ networkId: IntId.optional(), mailboxId: IntId.optional(), authLevel: AuthLevel.optional(), status: Status.optional() })
      .loose(),
    response: z.array(UserIDInfo),
    list: { kind: 'array' },
    summary: 'Users of a network or mailbox, paged.',
  },
  byName: {
    method: 'POST',
    path: '/v2/users/by-name',
    request: z.object({ login: z.string().min(1) }).loose(),
    response: z.array(UserIDInfo),
    summary: 'Users with a login (one per network).',
  },
  role: {
    method: 'POST',
    path: '/v2/users/role',
    aliases: [{ method: 'POST', path: '/v2/users/{userId}/set-role' }],
    request: z.object({ userId, authLevel: AuthLevel, networkId: IntId.optional(), mailboxId: IntId.optional() }).loose(),
    response: UserIDInfo,
    minLevel: 'NetworkAdmin',
    summary: 'Set a user’s AuthLevel, optionally scoped.',
  },
  setNetworkMailbox: {
    method: 'POST',
    path: '/v2/users/set-network-mailbox',
    request: z.object({ userId, networkId: IntId.optional(), mailboxId: IntId.optional() }).loose(),
    response: UserIDInfo,
    minLevel: 'NetworkAdmin',
    summary: 'Move a user to another network or mailbox.',
  },
  key: {
    method: 'GET',
    path: '/v2/users/key/{userId}',
    aliases: [{ method: 'GET', path: '/v2/users/{userId}/api-key' }],
    request: z.object({ userId }).loose(),
    response: z.string(),
    summary: 'A user’s API key (another user’s needs NetworkAdmin).',
  },
  keyGenerate: {
    method: 'POST',
    path: '/v2/users/key-generate/{userId}',
    aliases: [{ method: 'POST', path: '/v2/users/{userId}/generate-api-key' }],
    request: z.object({ userId }).loose(),
    response: z.string(),
    idempotent: false,
    summary: 'Generate a new API key for a user; the previous one stops working at once.',
  },
  generatePassword: {
    method: 'POST',
    path: '/v2/users/generate-password',
    request: z.object({ length: z.number().int().min(4).max(256).optional() }).loose(),
    response: z.string(),
    summary: 'A random password that meets the composition rule (default 12 characters).',
  },
  password: {
    method: 'POST',
    path: '/v2/users/password',
    request: z.object({ userId, newPassword: Password }).loose(),
    response: z.literal(true),
    summary: 'Set a user’s password (another user’s needs NetworkAdmin).',
  },
  reset: {
    method: 'POST',
    path: '/v2/users/reset/{userId}',
    request: z.object({ userId }).loose(),
    response: z.literal(true),
    minLevel: 'MailboxAdmin',
    summary: 'End all bearer sessions of a user.',
  },
  sendSms: {
    method: 'POST',
    path: '/v2/users/send-sms',
    request: z.object({ userId, message: z.string().min(1) }).loose(),
    response: z.literal(true),
    idempotent: false,
    summary: 'Send a text message to a user.',
  },
  updateConfig: {
    method: 'POST',
    path: '/v2/users/update-config',
    request: z.object({ userId }).loose(),
    response: z.literal(true),
    shape: 'partial',
    summary: 'Set user configuration values (keys not published).',
  },
});
