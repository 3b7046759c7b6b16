/**
 * A claim rename that ran after the lease lapsed: a holder frozen between its lease check and the
 * rename (a stopped process, a paused VM) and woken after another instance took the mailbox over.
 * The rename is the row's, so while the row is still `claiming` the file moved is the row's file
 * and the lease holder finishes the claim with it. Once another holder has finished the row, the
 * file the late rename found under that name is a later export of the same name (a daily file): it
 * was moved into a processing path that nothing points at any more, and sat there for good, never
 * sent. Such a file goes back into the outbox, where the lease holder claims it as any new file.
 */
import { errorFields } from '../errors/index.js';
import type { DirHandle } from '../files/index.js';
import type { OutboundRow } from '../journal/index.js';
import type { OutboxContext } from './types.js';

/**
 * Right after a claim rename: whether the claim is given up, the file put back, because the
 * holding that checked the lease before the rename (`token`) had ended and the row was finished
 * meanwhile. Throws the lease's error when the row is still to be claimed by another holder.
 */
export async function lateClaimGivenUp(
  ctx: Pick<OutboxContext, 'lease' | 'journal' | 'calls' | 'logger'>,
  row: OutboundRow,
  dir: DirHandle,
  name: string | Buffer,
  processing: string,
  token: number | undefined,
): Promise<boolean> {
  if (ctx.lease.mayAct() && ctx.lease.token() === token) return false;
  if ((await ctx.journal.get(row.id))?.state === 'claiming') {
    ctx.lease.assertMayAct();
    return false;
  }
  const fields = { file: row.file_name, processing };
  try {
    // A link never replaces: should the ERP have exported the name once more, both files stay.
    await ctx.calls.link(processing, dir.at(name));
    await ctx.calls.unlinkIfExists(processing);
    await dir.sync();
    ctx.logger.warn(fields, 'a claim made after the mailbox lease lapsed took a later file of the same name; it is back in the outbox');
  } catch (err) {
    ctx.logger.error(
      { ...fields, ...errorFields(err) },
      'a later file of the same name, claimed after the mailbox lease lapsed, cannot go back into the outbox: move it there by hand',
    );
  }
  return true;
}
