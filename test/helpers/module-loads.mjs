// Preloaded with `node --import` into a child process: records the URL of every module the process
// loads, one per line, into the file named by GRIDSYNC_TEST_LOADS_FILE — what a test needs to
// see from outside which code a command brought into memory.
import { register } from 'node:module';

register('./module-loads-hooks.mjs', import.meta.url, { data: process.env.GRIDSYNC_TEST_LOADS_FILE });
