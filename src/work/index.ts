export { TrailingWork } from './trailing-work.js';
