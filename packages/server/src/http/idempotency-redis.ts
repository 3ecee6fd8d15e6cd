import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { HOUR_MS } from '../lib/clock.js';
import { sha256Hex } from '../lib/crypto.js';
import { IDEMPOTENCY_LOCK_MS, IDEMPOTENCY_TTL_MS } from './idempotency.js';
import type { ClaimAttempt, ClaimRef, IdempotencyRow, IdempotencyStore } from './idempotency-store.js';
import { redisOrFallback, redisScript } from './rate-limit/redis-client.js';

/**
 * Claims a key in one step, as the store's insert-or-take-over does: a key
 * that is absent, past its 24 hours, or in flight with its lock run out is
 * (re)written as in flight for the caller; otherwise the entry holding it is
 * returned. The times are the service clock's (ARGV), never Redis TIME, and
 * decide alone: the key's expiry only collects garbage, well after an entry
 * can matter.
 *
 * An entry is a hash {hash, state, status, body, locked, expires, created},
 * times in ms. KEYS[1]: the entry. ARGV: now, request hash, locked until,
 * expires at, expiry (ms). Returns {1} when claimed, else {0, hash, state,
 * status, body, locked, expires, created} (absent fields as '').
 */
const CLAIM = redisScript(`
local now = tonumber(ARGV[1])
local held = redis.call('HMGET', KEYS[1], 'hash', 'state', 'status', 'body', 'locked', 'expires', 'created')
if held[1] then
  local expires = tonumber(held[6]) or 0
  local locked = tonumber(held[5]) or 0
  if not (expires <= now or (held[2] == 'in_flight' and locked <= now)) then
    return {0, held[1], held[2] or '', held[3] or '', held[4] or '', held[5] or '', held[6] or '', held[7] or ''}
  end
  redis.call('DEL', KEYS[1])
end
redis.call('HSET', KEYS[1], 'hash', ARGV[2], 'state', 'in_flight', 'locked', ARGV[3], 'expires', ARGV[4], 'created', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return {1}
`);

/**
 * Completes or deletes an entry, only while it is still the one the caller
 * holds: same state and same lock deadline (a takeover always sets a later
 * one). KEYS[1]: the entry. ARGV: expected state, expected locked until,
 * 'done' or 'delete', then for 'done' the status, the sealed body and the
 * expiry (ms). Returns 1 when it acted.
 */
const FINISH = redisScript(`
local held = redis.call('HMGET', KEYS[1], 'state', 'locked')
if held[1] ~= ARGV[1] or held[2] ~= ARGV[2] then return 0 end
if ARGV[3] == 'delete' then return redis.call('DEL', KEYS[1]) end
redis.call('HSET', KEYS[1], 'state', 'done', 'status', ARGV[4], 'body', ARGV[5])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
return 1
`);

/** How long past its last possible use Redis keeps an entry: room for clocks of different processes that disagree. */
const GC_SLACK_MS = HOUR_MS;

export const DEFAULT_IDEMPOTENCY_PREFIX = 'kiln:idem:';

export interface RedisIdempotencyOptions {
  redis: Redis;
  /** Prepended to every key; one deployment, or one test, per prefix. */
  prefix?: string;
  /** Answers while Redis cannot: the store's table. */
  fallback: IdempotencyStore;
  logger?: Pick<Logger, 'warn' | 'info'>;
}

/** The Redis key of an entry: the account id (ours) and a hash of the client's key, never the client's text. */
export function idempotencyRedisKey(prefix: string, accountId: string, idemKey: string): string {
  return `${prefix}${accountId}:${sha256Hex(idemKey)}`;
}

const ms = (isoTime: string): string => String(Date.parse(isoTime));
const isoOf = (msText: string): string => new Date(Number(msText)).toISOString();

/**
 * Idempotency-Keys in Redis, shared by every process on it. While Redis
 * fails, claims go to the store instead; a claim or entry that came from the
 * store is finished there. A claim made on Redis whose completion cannot be
 * written (Redis went down meanwhile) is left to its lock, which runs out
 * after a minute, as in the store when a write fails.
 */
export function redisIdempotencyStore(options: RedisIdempotencyOptions): IdempotencyStore {
  const { redis, fallback } = options;
  const prefix = options.prefix ?? DEFAULT_IDEMPOTENCY_PREFIX;
  const guarded = redisOrFallback(options.logger, 'idempotency', 'keys are claimed in the store');
  /** Claims and entries the fallback made or returned: they are finished there. */
  const fromFallback = new WeakSet<object>();
  const keyOf = (ref: ClaimRef) => idempotencyRedisKey(prefix, ref.account_id, ref.idem_key);

  async function claimOnRedis(row: IdempotencyRow): Promise<ClaimAttempt> {
    // A row retried after a round on the fallback (Redis came back in between) now belongs here.
    fromFallback.delete(row);
    const reply = await CLAIM(redis, [keyOf(row)], [
      ms(row.created_at), row.request_hash, ms(row.locked_until), ms(row.expires_at), IDEMPOTENCY_LOCK_MS + GC_SLACK_MS,
    ]) as [number, ...string[]];
    if (Number(reply[0]) === 1) return { kind: 'claimed' };
    const [, hash, state, status, body, locked, expires, created] = reply;
    return {
      kind: 'held',
      entry: {
        account_id: row.account_id, idem_key: row.idem_key, request_hash: hash!,
        state: state === 'done' ? 'done' : 'in_flight', status_code: status ? Number(status) : null, response_body: body || null,
        locked_until: isoOf(locked!), expires_at: isoOf(expires!), created_at: isoOf(created || locked!),
      },
    };
  }

  async function claimOnFallback(row: IdempotencyRow): Promise<ClaimAttempt> {
    const attempt = await fallback.claim(row);
    fromFallback.add(row);
    if (attempt.kind === 'held') fromFallback.add(attempt.entry);
    return attempt;
  }

  const finish = (ref: ClaimRef, state: string, args: (string | number)[]) =>
    guarded(async () => {
      await FINISH(redis, [keyOf(ref)], [state, ms(ref.locked_until), ...args]);
    }, () => undefined);

  return {
    claim: (row) => guarded(() => claimOnRedis(row), () => claimOnFallback(row)),
    complete: (claim, statusCode, sealedResponse) => (fromFallback.has(claim)
      ? fallback.complete(claim, statusCode, sealedResponse)
      : finish(claim, 'in_flight', ['done', statusCode, sealedResponse, IDEMPOTENCY_TTL_MS + GC_SLACK_MS])),
    release: (claim) => (fromFallback.has(claim) ? fallback.release(claim) : finish(claim, 'in_flight', ['delete'])),
    discard: (entry) => (fromFallback.has(entry) ? fallback.discard(entry) : finish(entry, 'done', ['delete'])),
  };
}
