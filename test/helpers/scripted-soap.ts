// A SOAP service answering the daemon's operations from a test's script (not our emulator): each
// operation's result XML comes from `answer`, wrapped in the envelope the real interface sends.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** What `answer` returns to take the request and drop the connection without an answer. */
export const DROP = Symbol('drop the connection');

export interface ScriptedSoap {
  readonly url: string;
  /** The operations called, in order. */
  readonly calls: string[];
  close(): Promise<void>;
}

export async function soapService(
  answer: (operation: string, body: string) => string | undefined | typeof DROP,
  options: { readonly dateOffsetMs?: number } = {},
): Promise<ScriptedSoap> {
  const calls: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const operation = /<(?:\w+:)?Body[^>]*>\s*<(?:\w+:)?(\w+)/.exec(body)?.[1] ?? '';
      calls.push(operation);
      const result = answer(operation, body);
      if (result === DROP) return void req.socket.destroy();
      res.writeHead(200, {
        'content-type': 'text/xml; charset=utf-8',
        date: new Date(Date.now() + (options.dateOffsetMs ?? 0)).toUTCString(),
      });
      res.end(
        `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>` +
          `<${operation}Response xmlns="http://www.gxs.com/GridOS/">${result ?? ''}</${operation}Response></soap:Body></soap:Envelope>`,
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v4.1/GridOS.asmx`,
    calls,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
