/** Filesystem helpers shared by the pipelines and the CLI: durable steps, safe opening, safe names. */
export {
  checkWritable,
  ensureDirDurable,
  exists,
  FileOperationError,
  freeBytes,
  freeNameIn,
  fsyncDir,
  fsyncFile,
  moveDurable,
  sameFilesystem,
} from './durable.js';
export {
  isByteOnlyPath,
  pathFromText,
  pathToText,
  processingName,
  renderTemplate,
  resolveInside,
  sanitizeFileName,
  SENT_TEMPLATE_VARIABLES,
  TEMPLATE_VARIABLES,
  uniqueVariant,
  unlikeMarker,
  type TemplateVars,
} from './naming.js';
export { createExclusive, describeKind, DirHandle, openDirInside, openRegularNoFollow, UnsafeFileError } from './safe-open.js';
export { SharedSync } from './coalesce.js';
export { NamesInUse } from './names-in-use.js';
export { isLocalType, onLocalFilesystems } from './filesystem-kind.js';
export { FileCalls, fsyncFd, SMALL_FILE_BYTES } from './calls.js';
export { CrossFilesystemError, UnsafePathError } from './path-errors.js';
export { FolderElsewhereError, FolderHome } from './folder-home.js';
