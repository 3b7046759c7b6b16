export { describeIssue } from './describe.js';
export { formatKeyPath, keyTree, nearest, type KeyNode } from './key-tree.js';
