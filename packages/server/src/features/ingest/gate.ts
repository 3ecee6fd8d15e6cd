import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Clock } from '../../lib/clock.js';
import { redisOrFallback, redisScript } from '../../http/rate-limit/redis-client.js';
import { INGEST_GATE_MS, tooFrequent, type IngestService } from './service.js';

export type GateEntry = { ok: true } | { ok: false; retryAfterSeconds: number };

/**
 * The 55-second gate in front of the store's. The store's claim applies the
 * gate itself (its UPDATE checks last_ingest_at) and stays the authority; a
 * gate here only refuses early, without touching the store, a push that
 * comes too soon after the last one it let through.
 */
export interface IngestGate {
  /** Lets a push for this collector key (its hash) through at `nowMs`, atomically, or says how long to wait. */
  enter(keyHash: string, nowMs: number): Promise<GateEntry>;
  /** Undoes the pass of `enter` at `nowMs` when the store then refused the push or it failed; a later pass is left alone. Never throws. */
  release(keyHash: string, nowMs: number): Promise<void>;
}

const OPEN: GateEntry = Object.freeze({ ok: true });

/** No gate in front: the store's claim decides alone (no REDIS_URL). */
export const storeOnlyGate: IngestGate = {
  enter: async () => OPEN,
  release: async () => undefined,
};

/**
 * KEYS[1]: the collector key's gate. ARGV: now (ms, the service clock), the
 * gate (ms), the key's expiry (ms). The value is the time of the last pass.
 * Returns 0 when this push passes (and is now the last pass), else the ms
 * left. As in the store, a pass stamped later than `now` (a clock behind
 * another process's) makes the wait longer, never shorter.
 */
const ENTER = redisScript(`
local now = tonumber(ARGV[1])
local last = tonumber(redis.call('GET', KEYS[1]))
if last and now < last + tonumber(ARGV[2]) then return last + tonumber(ARGV[2]) - now end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
return 0
`);

/** KEYS[1]: the gate; ARGV[1]: the pass to undo. Deletes it only if no other pass replaced it. */
const RELEASE = redisScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`);

export const DEFAULT_GATE_PREFIX = 'kiln:gate:';
/**
 * Redis forgets a pass this long after it (real time): twice the gate, room
 * for clocks that disagree. It only collects garbage: the times in the
 * values decide, and the store's gate covers a pass forgotten early.
 */
const GATE_EXPIRY_MS = 2 * INGEST_GATE_MS;

export interface RedisGateOptions {
  redis: Redis;
  /** Prepended to every key; one deployment, or one test, per prefix. */
  prefix?: string;
  logger?: Pick<Logger, 'warn' | 'info'>;
}

/**
 * The gate in Redis, per collector key (its SHA-256, as the store keeps it),
 * shared by every process. A push passes here before the store's claim; when
 * the store then refuses it (unknown, rotated-out or trashed key, or the
 * store's own gate) or fails, the pass is released, so an invalid key never
 * blocks anything and a flood of random keys leaves no entries behind once
 * its requests are answered. While Redis fails, every push goes on to the
 * store, whose gate holds alone.
 */
export function redisIngestGate(options: RedisGateOptions): IngestGate {
  const { redis } = options;
  const prefix = options.prefix ?? DEFAULT_GATE_PREFIX;
  const guarded = redisOrFallback(options.logger, 'ingest gate', 'the store\'s gate decides alone');
  return {
    enter: (keyHash, nowMs) => guarded(async () => {
      const waitMs = Number(await ENTER(redis, [prefix + keyHash], [nowMs, INGEST_GATE_MS, GATE_EXPIRY_MS]));
      return waitMs > 0 ? { ok: false, retryAfterSeconds: Math.ceil(waitMs / 1000) } : OPEN;
    }, () => OPEN),
    release: (keyHash, nowMs) => guarded(async () => {
      await RELEASE(redis, [prefix + keyHash], [nowMs]);
    }, () => undefined),
  };
}

/**
 * The ingest service behind a gate: the gate is passed first, at the time
 * the service then receives the push at, and released when the service does
 * not accept it.
 */
export function gatedIngest(service: IngestService, gate: IngestGate, clock: Clock): IngestService {
  if (gate === storeOnlyGate) return service;
  return {
    ...service,
    async ingest(keyHash, snapshot, raw, now = clock.now()) {
      const pass = await gate.enter(keyHash, now.getTime());
      if (!pass.ok) throw tooFrequent(pass.retryAfterSeconds);
      try {
        return await service.ingest(keyHash, snapshot, raw, now);
      } catch (err) {
        await gate.release(keyHash, now.getTime());
        throw err;
      }
    },
  };
}
