import type { FastifyInstance } from 'fastify';
import { ApiError } from './errors.js';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * JSON bodies must be valid UTF-8: a malformed byte sequence is refused
 * rather than silently turned into U+FFFD and stored. Parsing itself stays
 * Fastify's (secure-json-parse), which refuses `__proto__` and
 * `constructor.prototype` keys.
 */
export function registerJsonParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    let text: string;
    try {
      text = strictUtf8.decode(body as Buffer);
    } catch {
      done(new ApiError('invalid_json', 'the body is not valid UTF-8'), undefined);
      return;
    }
    parse(request, text, done);
  });
}
