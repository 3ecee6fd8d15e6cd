import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../lib/clock.js';
import { COLLECTOR_KEY_SHAPE, bearerToken } from '../auth.js';
import { clientBucketId } from '../client-ip.js';
import { ApiError } from '../errors.js';
import type { Bucket, Limiter } from './limiter.js';
import { bucketsFor, type Tiers } from './tiers.js';

export function rateLimited(retryAfterSeconds: number, message: string): ApiError {
  return new ApiError('rate_limited', message, [], retryAfterSeconds);
}

const TOO_MANY = 'too many requests; wait retry_after_seconds (the Retry-After header) and retry';

/**
 * The request tiers as two hooks around authentication.
 *
 * `beforeAuth` (onRequest, ahead of the auth hook) debits the per-IP bucket
 * of every request: unauthenticated ones, 404s, floods of bad tokens, so
 * none of them costs a credential lookup once the address is over its
 * limit. On collector routes it also debits the collector key's bucket in
 * the same round trip: the key is known from the header alone, and ingest,
 * the hot path, then pays for one limiter call.
 *
 * `afterAuth` (preParsing: after every onRequest hook, so after the auth
 * hook, and before the body is read) debits the credential, the account and
 * the route's sub-limit, all or nothing: a request refused there keeps only
 * the per-IP debit it already paid.
 */
export function requestLimits(deps: { limiter: Limiter; clock: Clock; tiers: Tiers }) {
  const { limiter, clock } = deps;
  const buckets = bucketsFor(deps.tiers);

  async function enforce(list: Bucket[]): Promise<void> {
    const result = await limiter.take(list, 1, clock.now().getTime());
    if (!result.allowed) throw rateLimited(result.retryAfterSeconds, TOO_MANY);
  }

  return {
    async beforeAuth(request: FastifyRequest): Promise<void> {
      const list = [buckets.ip(clientBucketId(request.ip))];
      if (!request.is404 && request.routeOptions.config.auth === 'collector') {
        const token = bearerToken(request);
        if (token && COLLECTOR_KEY_SHAPE.test(token)) list.push(buckets.collectorKey(token));
      }
      await enforce(list);
    },

    async afterAuth(request: FastifyRequest, _reply: FastifyReply, payload: unknown): Promise<unknown> {
      const principal = request.principal;
      if (!principal) return payload;
      const list = [buckets.credential(principal.credentialId), buckets.account(principal.accountId)];
      const limit = request.routeOptions.config.rateLimit;
      if (limit) list.push(buckets.route(limit, principal.accountId));
      await enforce(list);
      return payload;
    },
  };
}
