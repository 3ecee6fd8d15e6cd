import type { FastifyReply, FastifyRequest } from 'fastify';

const ALLOW_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE';
const ALLOW_HEADERS = 'Authorization, Content-Type, Content-Encoding, Idempotency-Key, X-Request-Id';
const EXPOSE_HEADERS = 'Retry-After, X-Request-Id, Idempotency-Replayed';

/**
 * Cross-origin access, off unless `CORS_ORIGINS` lists origins (or `*`).
 * Credentials travel in the Authorization header, never in cookies, so
 * Access-Control-Allow-Credentials is never sent: a wildcard cannot expose
 * anything a page could not already read with the user's token.
 *
 * Two hooks: `headers` runs first, so even a 429 carries the CORS headers
 * and a browser can read its Retry-After; `preflight` answers an allowed
 * preflight after the per-IP limit, which counts it like any request.
 */
export function corsHooks(origins: readonly string[]) {
  const anyOrigin = origins.includes('*');
  const allowed = new Set(origins);
  const isAllowed = (origin: unknown): origin is string => typeof origin === 'string' && (anyOrigin || allowed.has(origin));

  return {
    enabled: origins.length > 0,

    async headers(request: FastifyRequest, reply: FastifyReply): Promise<void> {
      // Answers differ by Origin, so caches must key on it.
      if (!anyOrigin) reply.header('Vary', 'Origin');
      const origin = request.headers.origin;
      if (!isAllowed(origin)) return;
      reply.header('Access-Control-Allow-Origin', anyOrigin ? '*' : origin);
      reply.header('Access-Control-Expose-Headers', EXPOSE_HEADERS);
    },

    async preflight(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
      if (request.method !== 'OPTIONS' || !request.headers['access-control-request-method'] || !isAllowed(request.headers.origin)) return;
      return reply.code(204)
        .header('Access-Control-Allow-Methods', ALLOW_METHODS)
        .header('Access-Control-Allow-Headers', ALLOW_HEADERS)
        .header('Access-Control-Max-Age', '600')
        .send();
    },
  };
}
