import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { ApiError, storeUnavailable, type ErrorDetail } from './errors.js';
import { isStoreUnavailable } from '../store/errors.js';
import type { ErrorCode } from './error-codes.js';
import { validationDetails } from './validation.js';
import { applySecurityHeaders, securityHeaders } from './security-headers.js';

export interface ErrorEnvelope {
  error: ErrorCode;
  message: string;
  request_id: string;
  documentation_url: string;
  retryable: boolean;
  retry_after_seconds: number | null;
  details: ErrorDetail[];
}

export function originOf(request: FastifyRequest, publicUrl: string | null): string {
  return publicUrl ?? `${request.protocol}://${request.host}`;
}

export function sendError(reply: FastifyReply, error: ApiError, publicUrl: string | null): FastifyReply {
  const request = reply.request;
  const envelope: ErrorEnvelope = {
    error: error.code,
    message: error.message,
    request_id: request.id,
    documentation_url: `${originOf(request, publicUrl)}/docs/errors#${error.code}`,
    retryable: error.retryable,
    retry_after_seconds: error.retryAfterSeconds,
    details: error.details,
  };
  if (error.retryAfterSeconds !== null) reply.header('Retry-After', String(error.retryAfterSeconds));
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply.code(error.status).type('application/json; charset=utf-8').send(JSON.stringify(envelope));
}

/** Maps what Fastify itself throws (parsing, limits, schema validation) onto our codes. */
function fromFramework(error: FastifyError): ApiError | null {
  if (error.validation) {
    const details = validationDetails(error.validation as any, error.validationContext ?? 'body');
    const first = details[0];
    const message = first ? `${first.field}: ${first.issue}` : 'the request is invalid';
    return new ApiError('validation_failed', message, details);
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('payload_too_large', 'the request body is too large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('unsupported_media_type', 'send the body as application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('invalid_json', 'the body is empty although Content-Type says JSON');
    case 'FST_ERR_BAD_URL':
      return new ApiError('not_found', 'the path is not a valid URL');
  }
  const status = error.statusCode ?? 500;
  if (status === 400 && (error instanceof SyntaxError || error.code?.startsWith('FST_ERR_CTP'))) {
    return new ApiError('invalid_json', 'the body is not valid JSON');
  }
  if (status === 413) return new ApiError('payload_too_large', 'the request body is too large');
  if (status === 415) return new ApiError('unsupported_media_type', 'send the body as application/json');
  if (status >= 400 && status < 500) return new ApiError('validation_failed', 'the request is malformed');
  return null;
}

/**
 * Fastify's `frameworkErrors` option: a URL it cannot decode is refused
 * before routing, so before any hook. Without this the answer would be
 * Fastify's own body, without the envelope, request id or security headers.
 */
export function frameworkErrorHandler(publicUrl: string | null) {
  const headers = securityHeaders(publicUrl);
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    reply.header('X-Request-Id', request.id);
    applySecurityHeaders(reply, headers);
    sendError(reply, fromFramework(error) ?? new ApiError('validation_failed', 'the request is malformed'), publicUrl);
  };
}

const METHODS: HTTPMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * One error handler for the whole service: every 4xx/5xx leaves as the
 * envelope. Unknown paths are 404; a known path with another verb is 405 with
 * `Allow`, found by a router that mirrors every registered route.
 */
export function registerErrorHandling(app: FastifyInstance, publicUrl: string | null): void {
  const known = FindMyWay();
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      if (METHODS.includes(method as HTTPMethod)) {
        try {
          known.on(method as HTTPMethod, route.url, () => {});
        } catch {
          // The same method and path registered twice (HEAD beside GET) is already known.
        }
      }
    }
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const apiError = error instanceof ApiError ? error : fromFramework(error);
    if (apiError) return sendError(reply, apiError, publicUrl);
    if (isStoreUnavailable(error)) {
      // Expected while PostgreSQL restarts or another program holds the SQLite lock; the client is told to retry.
      request.log.warn({ err: error }, 'store unavailable; answered 503');
      return sendError(reply, storeUnavailable(), publicUrl);
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendError(reply, new ApiError('internal_error', 'an internal error occurred; the request id finds it in the logs'), publicUrl);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = METHODS.filter((method) => known.find(method, path) !== null);
    if (allowed.length > 0) {
      const error = new ApiError('method_not_allowed', `${request.method} is not allowed on this path`, [], null, {
        Allow: allowed.join(', '),
      });
      return sendError(reply, error, publicUrl);
    }
    return sendError(reply, new ApiError('not_found', `no route for ${request.method} ${path}`), publicUrl);
  });
}
