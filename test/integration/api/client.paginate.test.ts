import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { catalog, GridClient } from '../../../src/api/index.js';
import { envelope, startScriptedServer, type ScriptedServer } from '../../helpers/api-server.js';

let s: ScriptedServer;
let client: GridClient;
beforeEach(async () => {
  s = await startScriptedServer();
  client = new GridClient({ baseUrl: s.url, auth: { apiKey: 'k' } });
});
afterEach(async () => {
  await client.close();
  await s.close();
});

const parcel = (id: number) => ({ parcelId: id, mailboxId: 1, fileName: `p${id}` });

describe('pagination', () => {
  it('bare-array lists: pages until one is shorter than recordsPerPage', async () => {
    s.script(envelope([parcel(1), parcel(2)]), envelope([parcel(3), parcel(4)]), envelope([parcel(5)]));
    const ids: number[] = [];
    for await (const p of client.paginate(catalog.parcels.outboxList, { recordsPerPage: 2 })) ids.push(p.parcelId);
    expect(ids).toEqual([1, 2, 3, 4, 5]);
    expect(s.requests.map((r) => JSON.parse(r.body).pageNo)).toEqual([1, 2, 3]);
  });

  it('object lists: pages until totalRecords is reached', async () => {
    const page = (n: number, nets: number[]) =>
      envelope({
        totalRecords: 3,
        pageNo: n,
        recordsPerPage: 2,
        networks: nets.map((id) => ({ networkId: id, uniqueId: `N${id}`, companyName: 'x', status: 'Active' })),
      });
    s.script(page(1, [1, 2]), page(2, [3]));
    const ids: number[] = [];
    for await (const n of client.paginate(catalog.networks.list, { recordsPerPage: 2 })) ids.push(n.networkId);
    expect(ids).toEqual([1, 2, 3]);
    expect(s.requests).toHaveLength(2);
  });
});
