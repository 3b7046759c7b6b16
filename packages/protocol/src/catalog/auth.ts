/** Auth (6): login, logout, token refresh, session info, password change, version. docs/wire.md#catalog. */
import { z } from 'zod';
import { LoginResult, Password, SessionInfo, VersionInfo } from '../wire/index.js';
import { defineGroup } from './endpoint.js';

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

export const auth = defineGroup('Auth', 'auth', {
  login: {
    method: 'POST',
    path: '/v2/auth/login',
    request: LoginRequest,
    response: LoginResult,
    auth: false,
    idempotent: false,
    summary: 'Log in with login + password; returns a bearer token, its expiresAt and (variant) a refreshToken.',
  },
  refresh: {
    method: 'POST',
    path: '/v2/auth/refresh',
    request: RefreshRequest,
    response: LoginResult,
    auth: false,
    idempotent: false,
    summary: 'Exchange a token (or refresh token) for a new bearer token; the old one stops working.',
  },
  logout: {
    method: 'POST',
    path: '/v2/auth/logout',
    request: z.object({}).loose(),
    response: z.null(),
    summary: 'End a bearer session (an API key is not revoked).',
  },
  session: {
    method: 'POST',
    path: '/v2/auth/session',
    request: z.object({}).loose(),
    response: SessionInfo,
    summary: 'The current session: user, mailbox, network, auth level, expiry.',
  },
  version: {
    method: 'GET',
    path: '/v2/auth/version',
    request: z.object({}).loose(),
    response: VersionInfo,
    auth: false,
    summary: 'Interface version (no authentication); an opaque string such as "2.6".',
  },
  changePassword: {
    method: 'PUT',
    path: '/v2/auth/password',
    request: z.object({ currentPassword: z.string().min(1), newPassword: Password }).loose(),
    response: z.null(),
    summary: "Change the caller's own password (existing tokens stay valid).",
  },
});
