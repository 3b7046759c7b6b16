/**
 * The config's keys as the schema declares them, read from the zod schema itself: the environment
 * overrides, the "did you mean" hints and the tests that hold the example file to the schema all
 * walk this tree, so a key added to the schema is known everywhere without another list to edit.
 */
import { keyTree, type KeyNode } from '@gridsync/protocol/issues';
import { ConfigSchema } from './schema.js';

/** The whole config's keys. */
export const CONFIG_KEYS = keyTree(ConfigSchema);

/** Every setting's path, entries written `mailboxes[]` and map keys `partners.*`. */
export function settingPaths(node: KeyNode = CONFIG_KEYS, prefix = ''): string[] {
  switch (node.kind) {
    case 'value':
      return [prefix];
    case 'entries':
      return settingPaths(node.entry, `${prefix}[]`);
    case 'map':
      return settingPaths(node.value, `${prefix}.*`);
    case 'section':
      return [...node.keys].flatMap(([k, child]) => settingPaths(child, prefix ? `${prefix}.${k}` : k));
  }
}
