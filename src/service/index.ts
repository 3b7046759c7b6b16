/** The configured service (embedded emulator + client): what the daemon and the commands connect to. */
export { connectService, embeddedDataFile, restBeside } from './connect.js';
export type { ServiceConfig, ServiceConnection, ServiceOptions } from './connect.js';
