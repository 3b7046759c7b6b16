// A TCP proxy in front of a test's PostgreSQL server that shows the test every message the clients
// send (the frontend side of the wire protocol): what the journal asks of the server, seen from
// outside the driver.
import net from 'node:net';

export interface PgWireProxy {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * `onMessage(connection, type, message)` for each message after a connection's startup message:
 * `connection` numbers the connections from 0 as they come, `type` is the message's type byte
 * (`P` Parse, `Q` Query, `S` Sync…), `message` the whole message, type byte included.
 */
export async function pgWireProxy(
  port: number,
  onMessage: (connection: number, type: number, message: Buffer) => void,
): Promise<PgWireProxy> {
  const sockets = new Set<net.Socket>();
  let connections = 0;
  const proxy = net.createServer((client) => {
    const connection = connections++;
    const upstream = net.connect(port, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    let buffered = Buffer.alloc(0);
    let started = false;
    client.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        // The startup message has no type byte; every later one does.
        const head = started ? 1 : 0;
        if (buffered.length < head + 4) break;
        const length = buffered.readInt32BE(head);
        if (buffered.length < head + length) break;
        if (started) onMessage(connection, buffered[0] as number, buffered.subarray(0, head + length));
        buffered = buffered.subarray(head + length);
        started = true;
      }
    });
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    port: (proxy.address() as net.AddressInfo).port,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => proxy.close(r));
    },
  };
}
