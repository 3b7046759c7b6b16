/**
 * Network writes and contacts. Profile fields beyond NetworkIDInfo (address, phone, website),
 * configuration values, contacts and X12 delimiters are kept as settings of the network and shown
 * by `networks.get` (under `profile`, `config`, `contacts`, `x12Delimiters`).
 */
import { invalidParameter, iso, objectNotFound, type Handler, type HandlerContext } from '../context.js';
import { NetworkContactType } from '@gridsync/protocol/wire';
import { configOf, delimiters, networkInfo, saveConfig, visibleNetwork } from './common.js';
import type { NetworkRow } from '../store.js';

const PROFILE_FIELDS = ['address1', 'address2', 'city', 'state', 'zip', 'phone', 'website'] as const;

interface Contact {
  name: string | null;
  email: string | null;
  phone: string | null;
}

export function networkDetail(ctx: HandlerContext, n: NetworkRow): Record<string, unknown> {
  const settings = ctx.world.store.settings('network', n.network_id);
  const profile: Record<string, unknown> = {};
  const contacts: Record<string, unknown>[] = [];
  for (const [k, v] of Object.entries(settings)) {
    if (k.startsWith('profile.')) profile[k.slice(8)] = v;
    if (k.startsWith('contact.')) contacts.push({ contactType: k.slice(8), ...(v as Contact) });
  }
  return {
    ...networkInfo(n),
    profile,
    config: configOf(ctx, 'network', n.network_id),
    contacts,
    x12Delimiters: settings.x12Delimiters ?? null,
  };
}

/** `contacts: [{ contactType, name, email, phone }]` in update-config replaces those contacts. */
function saveContacts(ctx: HandlerContext, networkId: number, value: unknown): void {
  if (!Array.isArray(value)) throw invalidParameter('contacts: must be an array of { contactType, name, email, phone }');
  for (const [i, c] of value.entries()) {
    const rec = c as Record<string, unknown> | null;
    if (!rec || typeof rec !== 'object' || Array.isArray(rec)) throw invalidParameter(`contacts.${i}: must be an object`);
    const type = NetworkContactType.safeParse(rec.contactType);
    if (!type.success) throw invalidParameter(`contacts.${i}.contactType: not a NetworkContactType`);
    const text = (f: string): string | null => {
      const v = rec[f];
      if (v === undefined || v === null) return null;
      if (typeof v !== 'string') throw invalidParameter(`contacts.${i}.${f}: must be a string`);
      return v;
    };
    ctx.world.store.setSetting('network', networkId, `contact.${type.data}`, {
      name: text('name'),
      email: text('email'),
      phone: text('phone'),
    } satisfies Contact);
  }
}

export const networkHandlers: Record<string, Handler> = {
  'networks.get': (ctx) => ({ data: networkDetail(ctx, visibleNetwork(ctx, ctx.input.networkId)) }),
  'networks.update': (ctx) => {
    const n = visibleNetwork(ctx, ctx.input.networkId);
    const { store } = ctx.world;
    store.db.transaction(() => {
      if (ctx.input.companyName !== undefined) {
        if ((ctx.input.companyName as string).trim() === '') throw invalidParameter('companyName: must not be empty');
        store.db.prepare('UPDATE networks SET company_name = ? WHERE network_id = ?').run(ctx.input.companyName, n.network_id);
      }
      for (const f of PROFILE_FIELDS)
        if (ctx.input[f] !== undefined) store.setSetting('network', n.network_id, `profile.${f}`, ctx.input[f]);
      store.db.prepare('UPDATE networks SET modified = ? WHERE network_id = ?').run(iso(ctx.world.now()), n.network_id);
    })();
    return { data: networkDetail(ctx, visibleNetwork(ctx, n.network_id)) };
  },
  'networks.getContact': (ctx) => {
    const n = visibleNetwork(ctx, ctx.input.networkId);
    const type = ctx.input.contactType as string;
    const c = ctx.world.store.setting<Contact>('network', n.network_id, `contact.${type}`);
    if (!c) throw objectNotFound(`network ${n.network_id} has no ${type} contact`);
    return { data: { networkId: n.network_id, contactType: type, name: c.name, email: c.email, phone: c.phone } };
  },
  'networks.updateConfig': (ctx) => {
    const n = visibleNetwork(ctx, ctx.input.networkId);
    ctx.world.store.db.transaction(() => {
      if (ctx.input.contacts !== undefined) saveContacts(ctx, n.network_id, ctx.input.contacts);
      saveConfig(ctx, 'network', n.network_id, 'networkId', ['contacts']);
    })();
    return { data: null, message: `configuration of network ${n.network_id} saved` };
  },
  'networks.x12Delimiters': (ctx) => {
    const n = visibleNetwork(ctx, ctx.input.networkId);
    ctx.world.store.setSetting('network', n.network_id, 'x12Delimiters', delimiters(ctx.input));
    return { data: null, message: `X12 delimiters of network ${n.network_id} saved` };
  },
};
