import { Transform, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from './errors.js';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * How deeply a JSON body may nest. Real bodies stay under ten levels (a
 * snapshot's deepest field is five); the cap keeps recursive work on a
 * parsed body (request hashing, serialising, rule evaluation) far from the
 * stack limit whatever a client sends.
 */
export const MAX_JSON_DEPTH = 128;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** How many `{` and `[` the text holds, counting no further than `limit` + 1. */
function openingsUpTo(text: string, limit: number): number {
  let count = 0;
  for (const opening of ['{', '[']) {
    for (let i = text.indexOf(opening); i !== -1; i = text.indexOf(opening, i + 1)) {
      if (++count > limit) return count;
    }
  }
  return count;
}

/** Where the string opened by the quote at `start` ends (its closing quote), or -1 when it never does. */
function stringEnd(text: string, start: number): number {
  for (let quote = text.indexOf('"', start + 1); quote !== -1; quote = text.indexOf('"', quote + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote;
  }
  return -1;
}

/**
 * True when `text` opens more than `max` objects or arrays inside one
 * another; brackets inside strings do not count. Runs before parsing, on
 * every JSON body: a body with no more than `max` openings at all (every
 * real snapshot but the largest hosts) is passed after a native count, and
 * strings are skipped with native searches rather than character by
 * character.
 */
export function nestsDeeperThan(text: string, max: number): boolean {
  if (openingsUpTo(text, max) <= max) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = stringEnd(text, i);
      if (i === -1) return false; // an unterminated string: the parser refuses the body
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Keep the JSON body's text on `request.rawJson` (a route that stores the body as sent). */
    keepRawJson?: boolean;
  }
  interface FastifyRequest {
    /** The JSON body as received (after any Content-Encoding), on routes with `keepRawJson`. */
    rawJson: string | null;
  }
}

/**
 * JSON is the only body the API takes. Bodies must be valid UTF-8: a
 * malformed byte sequence is refused rather than silently turned into U+FFFD
 * and stored; nesting is capped at MAX_JSON_DEPTH. Parsing itself stays
 * Fastify's (secure-json-parse), which refuses `__proto__` and
 * `constructor.prototype` keys. Fastify's built-in text/plain parser is
 * removed, so a text body is 415 like any other non-JSON type instead of
 * reaching a handler as a string.
 */
export function registerJsonParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.decorateRequest('rawJson', null);
  app.removeContentTypeParser('text/plain');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    let text: string;
    try {
      text = strictUtf8.decode(body as Buffer);
    } catch {
      done(new ApiError('invalid_json', 'the body is not valid UTF-8'), undefined);
      return;
    }
    if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
      done(new ApiError('invalid_json', `the body nests objects or arrays more than ${MAX_JSON_DEPTH} levels deep`), undefined);
      return;
    }
    if (request.routeOptions.config.keepRawJson) request.rawJson = text;
    parse(request, text, done);
  });
}

/** The stream Fastify reads a body from; `receivedEncodedLength` is how it checks Content-Length against the wire bytes. */
type BodyStream = Readable & { receivedEncodedLength?: number };

/**
 * A preParsing hook for routes that take `Content-Encoding: gzip` (or
 * `identity`). The route's bodyLimit then applies to the decompressed
 * bytes: decompression stops as soon as they pass `limit` (a gzip bomb ends
 * as 413 after at most `limit` bytes of output), and a corrupt stream is
 * 400 invalid_json. Any other encoding is 415.
 */
export function contentEncodingHook(limit: number) {
  return async (request: FastifyRequest, _reply: unknown, payload: BodyStream): Promise<BodyStream> => {
    const header = request.headers['content-encoding'];
    const encoding = typeof header === 'string' ? header.trim().toLowerCase() : '';
    if (encoding === '' || encoding === 'identity') return payload;
    if (encoding !== 'gzip' && encoding !== 'x-gzip') {
      throw new ApiError('unsupported_media_type', `Content-Encoding "${encoding.slice(0, 40)}" is not supported; send the body uncompressed or with gzip`,
        [], null, { 'Accept-Encoding': 'gzip' });
    }
    return gunzipWithin(payload, limit);
  };
}

function gunzipWithin(source: BodyStream, limit: number): BodyStream {
  const gunzip = createGunzip();
  let decoded = 0;
  const stop = () => {
    source.unpipe(gunzip);
    gunzip.destroy();
    // The rest of the upload is read and dropped, so the error answer can still be written.
    source.resume();
  };
  const output: Transform & BodyStream = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      decoded += chunk.length;
      if (decoded > limit) {
        stop();
        callback(new ApiError('payload_too_large', `the body is larger than ${limit} bytes once decompressed`));
        return;
      }
      callback(null, chunk);
    },
  });
  output.receivedEncodedLength = 0;
  source.on('data', (chunk: Buffer) => {
    output.receivedEncodedLength! += chunk.length;
  });
  gunzip.on('error', () => {
    stop();
    output.destroy(new ApiError('invalid_json', 'the body is not a valid gzip stream'));
  });
  // Once Fastify has answered it stops listening; a late error must not go unhandled.
  output.on('error', () => {});
  source.pipe(gunzip).pipe(output);
  return output;
}
