/**
 * Reading a SOAP message as it streams: namespace-aware with saxes into a small element tree —
 * except the base64 content element, whose text is handed out piece by piece while it arrives so
 * that a parcel of any size never sits in memory — within limits on bytes, elements, nesting and
 * list records, so that no answer can grow the tree without bound.
 */
import { SaxesParser, type SaxesTagNS } from 'saxes';
import { GridsyncError } from '../errors/index.js';
import { SoapXmlError } from './xml-error.js';

export interface XmlNode {
  readonly name: string;
  readonly ns: string;
  text: string;
  readonly children: XmlNode[];
  readonly nil: boolean;
  /** The text went to `onStream` instead of `text`. */
  streamed: boolean;
  /** Children named `ReadOptions.list.item` left out past `list.max` (counted, never kept). */
  omitted?: number;
}

export interface ReadOptions {
  /** Local names of elements whose text is streamed out (`Content`, …), below the body element. */
  readonly streamElements?: ReadonlySet<string>;
  /**
   * Receives the streamed text piece by piece, in order; awaited (back-pressure). `parent` is the
   * streamed element's parent as read so far (the fields before the content).
   */
  readonly onStream?: (text: string, element: string, parent: XmlNode) => void | Promise<void>;
  /** Limit on all other text together. Default 16 MiB. */
  readonly maxText?: number;
  /**
   * Limit on the size of the document outside the streamed elements and the list records left
   * out (`api.limits.maxBodyBytes`; counted in characters). A list runs as long as the call's
   * deadline lets it, as over REST: its extra records are only counted.
   */
  readonly maxBytes?: number;
  /** Limit on the elements kept in the tree (list records past `list.max` are not kept). */
  readonly maxElements?: number;
  /** List records: past `max` children of this name per parent, the rest are counted, not kept. */
  readonly list?: { readonly item: string; readonly max: number };
  /**
   * Called as each kept element closes (the root has depth 1), with its text and children complete;
   * what it throws ends the read with that error — so a receiver can refuse a document (e.g. check a
   * credential) before the rest of it arrives.
   */
  readonly onClose?: (node: XmlNode, depth: number) => void;
}

/** The answer went past one of the ReadOptions limits (bytes, elements). */
export class SoapLimitError extends GridsyncError {
  readonly code = 'GRID_SOAP_LIMIT';
  constructor(
    /** `maxBytes` or `maxElements`. */
    readonly limit: 'maxBytes' | 'maxElements',
    readonly value: number,
  ) {
    super(limit === 'maxBytes' ? `the answer is larger than ${value} bytes` : `the answer holds more than ${value} elements`);
  }
}

const MAX_DEPTH = 64;
/**
 * Attributes of one element: the service's carry a few (namespaces, `xsi:nil`, `xsi:type`).
 * saxes gathers an element's attributes until its tag closes, so millions of them in one tag
 * (30 MB of answer) took ~900 MB of heap before any other limit could look.
 */
const MAX_ATTRIBUTES = 64;
const XSI = 'http://www.w3.org/2001/XMLSchema-instance';

/**
 * saxes' own state, used for two things its API does not offer: `text` (what it holds between two
 * events: read and cleared to stream long text, as saxes emits text only at the next tag), and
 * whether it stands plainly inside text (`state` 13, nothing carried over), in which case a chunk
 * of pure content text is handed out without passing it through saxes character by character.
 */
type SaxesInternals = { text: string; state: number; carriedFromPrevious: string | undefined };
const SAXES_IN_TEXT = 13;
/** Characters that need saxes even inside content text: markup, entities, `]]>`, CR normalisation. */
const NEEDS_PARSER = /[<&\]\r]/;

/** Reads a whole XML document from chunks; returns the root element. */
export async function readXml(source: AsyncIterable<Uint8Array | string>, options: ReadOptions = {}): Promise<XmlNode> {
  const parser = new SaxesParser({ xmlns: true, position: false });
  const internals = parser as unknown as SaxesInternals;
  const maxText = options.maxText ?? 16 * 1024 * 1024;
  const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
  const maxElements = options.maxElements ?? Number.POSITIVE_INFINITY;
  const stack: XmlNode[] = [];
  let root: XmlNode | undefined;
  let textSize = 0;
  let elements = 0;
  let chars = 0;
  /** Characters of list records left out: counted, not held against maxBytes. */
  let dropped = 0;
  let dropStart = 0;
  let streamedChars = 0;
  let streaming: XmlNode | undefined;
  let streamParent: XmlNode | undefined;
  /** Depth in `stack` of a list record left out (its subtree is read but not kept), or 0. */
  let dropDepth = 0;
  let failure: Error | undefined;
  const pending: [string, string][] = [];
  const stream = (text: string, node: XmlNode): void => {
    streamedChars += text.length;
    pending.push([text, node.name]);
  };

  parser.on('error', (err) => {
    failure ??= new SoapXmlError(err.message, '(xml)');
  });
  // Where the tag being opened starts: a record left out counts from its `<`.
  let tagStart = 0;
  let attributes = 0;
  parser.on('opentagstart', (tag) => {
    tagStart = parser.position - tag.name.length - 2; // saxes has read `<`, the name and the character after it
    attributes = 0;
  });
  parser.on('attribute', () => {
    if (++attributes > MAX_ATTRIBUTES) failure ??= new SoapXmlError(`an element with more than ${MAX_ATTRIBUTES} attributes`, '(xml)');
  });
  parser.on('opentag', (tag: SaxesTagNS) => {
    const nil = Object.values(tag.attributes).some((a) => a.uri === XSI && a.local === 'nil' && (a.value === 'true' || a.value === '1'));
    const node: XmlNode = { name: tag.local, ns: tag.uri, text: '', children: [], nil, streamed: false };
    const parent = stack[stack.length - 1];
    if (!dropDepth && parent && options.list && tag.local === options.list.item) {
      const kept = parent.children.reduce((n, c) => (c.name === tag.local ? n + 1 : n), 0);
      if (kept >= options.list.max) {
        parent.omitted = (parent.omitted ?? 0) + 1;
        dropDepth = stack.length + 1;
        dropStart = tagStart;
      }
    }
    if (!dropDepth) {
      if (parent) parent.children.push(node);
      else root ??= node;
      if (++elements > maxElements) failure ??= new SoapLimitError('maxElements', maxElements);
    }
    stack.push(node);
    if (stack.length > MAX_DEPTH) failure ??= new SoapXmlError(`nested deeper than ${MAX_DEPTH} elements`, '(xml)');
    if (!dropDepth && stack.length >= 4 && options.streamElements?.has(tag.local) && !streaming) {
      streaming = node;
      streamParent = parent;
      node.streamed = true;
    }
  });
  parser.on('text', (text) => {
    const node = stack[stack.length - 1];
    if (!node) return;
    if (node === streaming) {
      stream(text, node);
      return;
    }
    if (dropDepth) return;
    textSize += text.length;
    if (textSize > maxText) failure ??= new SoapXmlError(`more than ${maxText} characters of text`, '(xml)');
    else node.text += text;
  });
  parser.on('cdata', (text) => {
    const node = stack[stack.length - 1];
    if (node && node === streaming) stream(text, node);
    else if (node && !dropDepth) node.text += text;
  });
  parser.on('closetag', () => {
    const depth = stack.length;
    const kept = !dropDepth || depth < dropDepth;
    if (depth === dropDepth) {
      dropDepth = 0;
      dropped += parser.position - dropStart;
    }
    const node = stack.pop();
    if (node === streaming) streaming = undefined;
    if (!node || !kept || !options.onClose || failure) return;
    try {
      options.onClose(node, depth);
    } catch (err) {
      failure = err instanceof Error ? err : new Error(String(err));
    }
  });

  const flush = async (): Promise<void> => {
    if (streaming && internals.text.length > 0) {
      stream(internals.text, streaming);
      internals.text = '';
    }
    for (const [text, element] of pending.splice(0)) await options.onStream?.(text, element, streamParent as XmlNode);
  };

  const decoder = new TextDecoder('utf-8');
  for await (const chunk of source) {
    const text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    chars += text.length;
    if (
      streaming &&
      internals.state === SAXES_IN_TEXT &&
      internals.carriedFromPrevious === undefined &&
      internals.text === '' &&
      !NEEDS_PARSER.test(text)
    ) {
      // The middle of a long content element: saxes would only append it to its text buffer.
      stream(text, streaming);
      await flush();
      continue;
    }
    parser.write(text);
    if (failure) throw failure;
    // Everything but the streamed content counts against the byte limit (content has its own cap).
    const held = chars - streamedChars - (streaming ? internals.text.length : 0) - dropped - (dropDepth ? parser.position - dropStart : 0);
    if (held > maxBytes) throw new SoapLimitError('maxBytes', maxBytes);
    // Guard against a server that sends endless text where none is streamed.
    if (!streaming && internals.text.length > maxText) throw new SoapXmlError(`more than ${maxText} characters of text`, '(xml)');
    await flush();
  }
  parser.write(decoder.decode());
  if (failure) throw failure;
  await flush();
  if (!root || stack.length > 0) throw new SoapXmlError('the document ends before its root element is closed', '(xml)', true);
  parser.close();
  if (failure) throw failure;
  return root;
}
