import type { FastifyInstance } from 'fastify';

/**
 * One access-log line per request, written when the response is done:
 * method, URL, status and milliseconds, with the request id the logger adds.
 * Fastify's own request logging writes two lines (incoming, completed) with
 * serialised request and response objects, which at thousands of ingest
 * pushes a second was a measurable share of a push's cost.
 */
export function registerAccessLog(app: FastifyInstance): void {
  app.addHook('onResponse', (request, reply, done) => {
    request.log.info({ method: request.method, url: request.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 }, 'request');
    done();
  });
}
