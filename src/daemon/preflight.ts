/**
 * Start-up refusals decided from the config and the local system before anything is opened: run
 * and once throw them, doctor reports each as a failure (✗) under the same name — one list, so a
 * refusal added here cannot be one doctor passes.
 */
import fs from 'node:fs';
import { folderRoles } from '../config/index.js';
import type { DaemonConfig } from './runtime.js';
import { StartupError } from './startup-error.js';

export interface PreflightCheck {
  readonly name: string;
  /** The refusal, or undefined when start-up may go on. */
  refusal(cfg: DaemonConfig): StartupError | undefined;
}

/** With createDirs: false a missing folder is most likely an unmounted share: never create it on the local disk. */
const foldersExist: PreflightCheck = {
  name: 'folders present, or created at start-up (createDirs)',
  refusal(cfg) {
    if (cfg.createDirs) return undefined;
    const missing = folderRoles(cfg).filter((r) => !fs.existsSync(r.dir));
    if (!missing.length) return undefined;
    return new StartupError(
      'STARTUP_FOLDERS',
      `createDirs: false and ${missing.map((r) => `${r.key} ${r.dir}`).join(', ')} ${missing.length === 1 ? 'does' : 'do'} not exist — an unmounted share? Mount it or create the folder; gridsync does not create folders with createDirs: false`,
    );
  },
};

/** A file (or anything else) where a folder should be: nothing could ever be delivered there. */
const foldersAreFolders: PreflightCheck = {
  name: 'the configured folders are folders',
  refusal(cfg) {
    const wrong = folderRoles(cfg).filter((r) => {
      try {
        return !fs.statSync(r.dir).isDirectory();
      } catch {
        return false; // missing: created at start-up, or refused by foldersExist
      }
    });
    if (!wrong.length) return undefined;
    return new StartupError(
      'STARTUP_FOLDERS',
      `${wrong.map((r) => `${r.key} ${r.dir}`).join(', ')} ${wrong.length === 1 ? 'is' : 'are'} not a folder — point the key at a folder, or move what is there aside`,
    );
  },
};

export const PREFLIGHT_CHECKS: readonly PreflightCheck[] = [foldersExist, foldersAreFolders];
