/** Filesystem helpers shared by the pipelines and the CLI: durable steps and safe names. */
export { checkWritable, ensureDirDurable, exists, FileOperationError, freeBytes, freeName, fsyncDir, fsyncFile, moveDurable, sameFilesystem } from './durable.js';
export { renderTemplate, resolveInside, sanitizeFileName, TEMPLATE_VARIABLES, uniqueVariant, type TemplateVars } from './naming.js';
