/** Auth (6): login, logout, token refresh, session info, password change, version. docs/wire.md#catalog. */
import { z } from 'zod';
import { LoginResult, Password, SessionInfo, VersionInfo } from '../wire/index.js';
import { endpoint } from './endpoint.js';

/** `login` is the reference field; one documented variant sends `email` instead (docs/wire.md#authentication). */
export const LoginRequest = z
  .object({
    login: z.string().min(1).optional(),
    email: z.string().min(1).optional(),
    password: z.string().min(1),
  })
  .loose()
  .refine((r) => r.login !== undefined || r.email !== undefined, { message: 'login is required', path: ['login'] });

/** The endpoint page sends `token`; the published rules name it `refreshToken`. Either is accepted. */
export const RefreshRequest = z
  .object({ token: z.string().min(1).optional(), refreshToken: z.string().min(1).optional() })
  .loose()
  .refine((r) => r.token !== undefined || r.refreshToken !== undefined, { message: 'token is required', path: ['token'] });

export const auth = {
  login: endpoint({
    name: 'auth.login',
    group: 'Auth',
    method: 'POST',
    path: '/v2/auth/login',
    request: LoginRequest,
    response: LoginResult,
    auth: false,
    idempotent: false,
    shape: 'exact',
    summary: 'Log in with login + password; returns a bearer token, its expiresAt and (variant) a refreshToken.',
  }),
  refresh: endpoint({
    name: 'auth.refresh',
    group: 'Auth',
    method: 'POST',
    path: '/v2/auth/refresh',
    request: RefreshRequest,
    response: LoginResult,
    auth: false,
    idempotent: false,
    shape: 'exact',
    summary: 'Exchange a token (or refresh token) for a new bearer token; the old one stops working.',
  }),
  logout: endpoint({
    name: 'auth.logout',
    group: 'Auth',
    method: 'POST',
    path: '/v2/auth/logout',
    request: z.object({}).loose(),
    response: z.null(),
    auth: true,
    idempotent: true,
    shape: 'exact',
    summary: 'End a bearer session (an API key is not revoked).',
  }),
  session: endpoint({
    name: 'auth.session',
    group: 'Auth',
    method: 'POST',
    path: '/v2/auth/session',
    request: z.object({}).loose(),
    response: SessionInfo,
    auth: true,
    idempotent: true,
    shape: 'exact',
    summary: 'The current session: user, mailbox, network, auth level, expiry.',
  }),
  version: endpoint({
    name: 'auth.version',
    group: 'Auth',
    method: 'GET',
    path: '/v2/auth/version',
    request: z.object({}).loose(),
    response: VersionInfo,
    auth: false,
    idempotent: true,
    shape: 'exact',
    summary: 'Interface version (no authentication); an opaque string such as "2.6".',
  }),
  changePassword: endpoint({
    name: 'auth.changePassword',
    group: 'Auth',
    method: 'PUT',
    path: '/v2/auth/password',
    request: z.object({ currentPassword: z.string().min(1), newPassword: Password }).loose(),
    response: z.null(),
    auth: true,
    idempotent: true,
    shape: 'exact',
    summary: "Change the caller's own password (existing tokens stay valid).",
  }),
} as const;
