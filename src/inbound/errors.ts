/** Why a parcel stops short of the inbox for now: typed, with stable codes (docs/errors.md). */
import { GridsyncError } from '../errors/index.js';

/** A local condition (disk full, folder unwritable) stops this parcel for now; the service keeps it. */
export class DeferError extends GridsyncError {
  readonly code = 'INBOUND_DEFERRED';
}

/** File errors that are the local disk's or folder's condition, not the parcel's: deferred, no attempt counted. */
export const DISK_ERRORS = new Set(['ENOSPC', 'EDQUOT', 'EACCES', 'EPERM', 'EROFS']);

/** Collision policy `fail`: the final name is taken. The parcel stays unconfirmed and is retried. */
export class GridNameCollisionError extends GridsyncError {
  readonly code = 'INBOUND_NAME_COLLISION';
  constructor(readonly path: string) {
    super(`${path} already exists (collision policy: fail)`);
  }
}

/**
 * A staged parcel whose staging file is gone while its final file is not in the inbox with the
 * staged content (a tmp cleaner or an operator removed it): never confirmed, downloaded again.
 */
export class StagingLostError extends GridsyncError {
  readonly code = 'INBOUND_STAGING_LOST';
  constructor(
    readonly stagingPath: string,
    readonly finalPath: string,
  ) {
    super(`the staged file ${stagingPath} is gone and ${finalPath} does not hold the staged content`);
  }
}

/**
 * A parcel whose download had not begun here is no longer pending on the service, as a complete
 * pending list and its lookup (confirmed) show: someone else took it (another client or the
 * service's web UI confirmed it, or an older journal backup holds it unfinished though it was
 * delivered since). Not downloaded here.
 */
export class ParcelTakenElsewhereError extends GridsyncError {
  readonly code = 'INBOUND_TAKEN_ELSEWHERE';
  constructor(readonly parcelId: number) {
    super(`parcel ${parcelId} is no longer pending on the service: taken elsewhere before its download here began; not downloaded here`);
  }
}
