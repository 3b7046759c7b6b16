/** The form binding beside SOAP: the same operations over the same store and sessions, another encoding. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SOAP_NS, decodeFields, operationByName, writeField, type XmlNode } from '@gridsync/protocol/soap';
import { RequestTooLargeError, readBoundedText } from '../request-body.js';
import { CONTENT_ELEMENTS, ContentSink, discardUpload } from './content-sink.js';
import { toSoapFault } from './fault.js';
import { OPERATIONS, type OpContext, type OpEnv, type Operation } from './operations/index.js';
import { send, sendFileInfo } from './respond.js';

/** Form-binding bodies are read whole: large content belongs on the SOAP binding. */
const FORM_MAX_BYTES = 64 * 1024 * 1024;

/**
 * The form binding some vendor tools use: `POST <address>/<Operation>` with form fields (or GET
 * with a query), one per parameter, all required; the answer is the bare result as XML whose root
 * is the result's type name; errors are HTTP 500 with plain text, no SOAP fault.
 */
export async function serveForm(env: OpEnv, req: IncomingMessage, res: ServerResponse, url: URL, opName: string): Promise<void> {
  const def = operationByName(opName);
  const plainError = (status: number, text: string): void => send(res, status, 'text/plain; charset=utf-8', text);
  if (!def) {
    req.resume();
    return plainError(500, `${opName} Web Service method name is not valid.`);
  }
  let fields: URLSearchParams;
  if (req.method === 'GET') {
    req.resume();
    fields = url.searchParams;
  } else if (req.method === 'POST' && /application\/x-www-form-urlencoded/i.test(req.headers['content-type'] ?? '')) {
    try {
      fields = new URLSearchParams(await readBoundedText(req, FORM_MAX_BYTES));
    } catch (err) {
      if (!(err instanceof RequestTooLargeError)) throw err;
      res.setHeader('connection', 'close');
      return plainError(500, `Request body larger than ${FORM_MAX_BYTES} bytes: use the SOAP binding for large content.`);
    }
  } else {
    req.resume();
    return plainError(500, 'Request format is unrecognized: send application/x-www-form-urlencoded.');
  }
  const upload = new ContentSink(env.world);
  const children: XmlNode[] = [];
  try {
    for (const p of def.params) {
      const v = fields.get(p.name);
      if (v === null) return plainError(500, `Missing parameter: ${p.name}.`);
      if (CONTENT_ELEMENTS.has(p.name)) await upload.push(v);
      children.push({ name: p.name, ns: SOAP_NS, text: v, children: [], nil: false, streamed: CONTENT_ELEMENTS.has(p.name) });
    }
  } catch (err) {
    await upload.discard();
    return plainError(500, (err as Error).message);
  }
  const content = await upload.finish().catch(async (err: unknown) => {
    await upload.discard();
    throw err;
  });
  try {
    const params = decodeFields({ name: def.name, ns: SOAP_NS, text: '', children, nil: false, streamed: false }, def.params, def.name, {
      fillDefaults: true,
    });
    const caller = def.session ? env.sessions.authenticate(params.SessionID) : null;
    const ctx: OpContext = {
      ...env,
      op: def,
      params,
      caller,
      content,
      raw: new Map(children.map((c) => [c.name, c.text])),
      ip: req.socket.remoteAddress ?? null,
    };
    const outcome = (OPERATIONS[def.name] as Operation)(ctx);
    if (!def.name.startsWith('ParcelUpload')) await discardUpload(env.world, content);
    const bare = (value: unknown): string => {
      const root = def.result.type;
      const out: string[] = [];
      writeField(out, { name: root, type: root, min: 1 }, value, { dates: 'z' });
      return `<?xml version="1.0" encoding="utf-8"?>${out.join('').replace(`<${root}>`, `<${root} xmlns="${SOAP_NS}">`)}`;
    };
    if ('download' in outcome) {
      return await sendFileInfo(res, env, outcome.download, bare, 'text/xml; charset=utf-8');
    }
    send(res, 200, 'text/xml; charset=utf-8', bare(outcome.result));
  } catch (err) {
    await discardUpload(env.world, content);
    if (res.headersSent) return void res.destroy();
    plainError(500, toSoapFault(err).message);
  }
}
