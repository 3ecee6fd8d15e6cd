import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import type { Clock } from '../lib/clock.js';
import { corsHooks } from './cors.js';
import type { Limiter } from './rate-limit/limiter.js';
import { requestLimits } from './rate-limit/request-limits.js';
import { registerSecurityHeaders } from './security-headers.js';

/**
 * What guards every request around authentication: security headers, CORS
 * and the request rate-limit tiers. Register it just before the auth hook:
 * the order of these onRequest hooks is the order they run in (CORS headers,
 * per-IP limit, preflight answer, then authentication); the per-credential
 * limits run at preParsing, after authentication.
 */
export function registerRequestGuards(
  app: FastifyInstance,
  deps: { config: Pick<Config, 'publicUrl' | 'corsOrigins' | 'rateLimits'>; limiter: Limiter; clock: Clock },
): void {
  const { config } = deps;
  registerSecurityHeaders(app, config.publicUrl);
  const cors = corsHooks(config.corsOrigins);
  if (cors.enabled) app.addHook('onRequest', cors.headers);
  if (config.rateLimits.enabled) {
    const limits = requestLimits({ limiter: deps.limiter, clock: deps.clock, tiers: config.rateLimits.tiers });
    app.addHook('onRequest', limits.beforeAuth);
    app.addHook('preParsing', limits.afterAuth);
  }
  if (cors.enabled) app.addHook('onRequest', cors.preflight);
}
