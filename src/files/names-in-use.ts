/**
 * Names that a move of this process is about to take in a folder. A name is held from the moment
 * it is found free until its file is there: two moves running side by side (same-named exports
 * archived in one burst) would otherwise both find `inv.x12` free, and the second rename would
 * replace the first file. Keys are the folder's path joined with the name.
 */
export class NamesInUse {
  private readonly held = new Set<string>();

  /** Holds `key`; false when it is held already. */
  hold(key: string): boolean {
    if (this.held.has(key)) return false;
    this.held.add(key);
    return true;
  }

  release(key: string): void {
    this.held.delete(key);
  }
}
