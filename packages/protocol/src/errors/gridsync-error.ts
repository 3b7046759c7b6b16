/**
 * The base of every error gridsync throws on purpose. `code` is stable and namespaced by concern
 * (`CONFIG_…`, `JOURNAL_…`, `STARTUP_…`, `GRID_…` for the service client, …): callers, exit codes
 * and alerts decide on it, never on message text, so a message can be reworded freely. The table
 * of codes with their meaning, exit code and what an operator does is docs/errors.md.
 */
export abstract class GridsyncError extends Error {
  abstract readonly code: string;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

export function isGridsyncError(err: unknown): err is GridsyncError {
  return err instanceof GridsyncError;
}
