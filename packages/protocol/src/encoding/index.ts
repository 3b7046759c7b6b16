/** Streaming codecs both sides of the wire use: base64 in bounded chunks, JSON read as it arrives. */
export { Base64Decoder, Base64Encoder, InvalidBase64Error, base64Length, maxDecodedLength } from './base64.js';
export { JsonStreamError, readJsonStreaming } from './json-stream.js';
