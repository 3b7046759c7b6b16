/** Certificates (5) of communication channels. docs/wire.md#catalog; the responses are CommIDInfo. */
import { z } from 'zod';
import { CertificateType, CertificateUsage, CommIDInfo, DateTime, IntId, SecureHashAlgorithm } from '../wire/index.js';
import { defineGroup, PositiveId } from './endpoint.js';

const commId = PositiveId;
/** What adding a certificate says in both forms, private (own key) and public (a partner's). */
const addCertificate = z.object({
  commId,
  certType: CertificateType,
  keyId: IntId.optional(),
  userId: IntId.optional(),
  beginUsage: DateTime.optional(),
  usage: CertificateUsage.optional(),
});

export const certificates = defineGroup('Certificates', 'certificates', {
  addPrivate: {
    method: 'POST',
    path: '/v2/certificates/add-private',
    request: addCertificate.extend({ cert: z.string().optional(), password: z.string().optional() }).loose(),
    response: CommIDInfo,
    idempotent: false,
    summary: 'Add a private certificate (base64) to a channel.',
    minLevel: 'MailboxAdmin',
  },
  addPublic: {
    method: 'POST',
    path: '/v2/certificates/add-public',
    request: addCertificate
      .extend({ partnerCommId: IntId.optional(), partnerUrl: z.string().optional(), cert: z.string().optional() })
      .loose(),
    response: CommIDInfo,
    idempotent: false,
    summary: 'Add a partner’s public certificate to a channel.',
    minLevel: 'MailboxAdmin',
  },
  create: {
    method: 'POST',
    path: '/v2/certificates/create',
    request: z
      .object({
        commId,
        beginUsage: DateTime.optional(),
        usage: CertificateUsage.optional(),
        secureHashAlgorithm: SecureHashAlgorithm.optional(),
        partnerAs2Id: z.string().optional(),
        expires: DateTime.optional(),
      })
      .loose(),
    response: CommIDInfo,
    idempotent: false,
    summary: 'Create a certificate for a channel.',
    minLevel: 'MailboxAdmin',
  },
  renew: {
    method: 'POST',
    path: '/v2/certificates/renew',
    request: z
      .object({
        commId,
        certKeyId: IntId,
        overlapDays: z.number().int().nonnegative().optional(),
        years: z.number().int().positive().optional(),
      })
      .loose(),
    response: CommIDInfo,
    idempotent: false,
    summary: 'Renew a certificate (default 2 years).',
    minLevel: 'MailboxAdmin',
  },
  terminate: {
    method: 'POST',
    path: '/v2/certificates/terminate',
    request: z.object({ commId, certKeyId: IntId }).loose(),
    response: z.literal(true),
    summary: 'Terminate a certificate.',
    minLevel: 'MailboxAdmin',
  },
});
