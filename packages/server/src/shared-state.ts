import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { redisIngestGate, storeOnlyGate, type IngestGate } from './features/ingest/gate.js';
import { redisIdempotencyStore } from './http/idempotency-redis.js';
import { sqlIdempotencyStore, type IdempotencyStore } from './http/idempotency-store.js';
import type { Database } from './store/schema.js';

/**
 * Short-lived state every process of a deployment must agree on, besides
 * the rate-limit buckets (which buildApp receives as its limiter): which
 * Idempotency-Keys are taken and what they answered, and which collector
 * keys just passed the 55-second ingest gate.
 */
export interface SharedState {
  idempotency: IdempotencyStore;
  ingestGate: IngestGate;
}

/** Without REDIS_URL: idempotency keys in the store's table, and the store's gate alone. */
export function storeSharedState(db: Kysely<Database>): SharedState {
  return { idempotency: sqlIdempotencyStore(db), ingestGate: storeOnlyGate };
}

export const DEFAULT_SHARED_PREFIX = 'kiln:';

/**
 * With REDIS_URL: both in Redis, under `<prefix>idem:` and `<prefix>gate:`.
 * While Redis fails, each falls back to the store (see storeSharedState).
 * The connection is the caller's: main.ts opens and closes it.
 */
export function redisSharedState(options: { redis: Redis; db: Kysely<Database>; logger?: Logger; prefix?: string }): SharedState {
  const { redis, logger } = options;
  const prefix = options.prefix ?? DEFAULT_SHARED_PREFIX;
  return {
    idempotency: redisIdempotencyStore({ redis, prefix: `${prefix}idem:`, fallback: sqlIdempotencyStore(options.db), logger }),
    ingestGate: redisIngestGate({ redis, prefix: `${prefix}gate:`, logger }),
  };
}
