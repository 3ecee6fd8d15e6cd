import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { ALLOWED, type Bucket, type Limiter, type TakeResult } from './limiter.js';
import { memoryLimiter, type MemoryLimiter } from './memory-limiter.js';
import { redisScript } from './redis-client.js';

/**
 * One script checks and debits every bucket of a request in one round trip,
 * atomically, so processes sharing this Redis share the buckets exactly. It
 * is the arithmetic of limiter.ts in Lua. The time comes from the caller (the
 * service clock), not from Redis TIME, so every process and every test
 * decides with the clock it was given. A bucket is a hash {tokens, at} whose
 * TTL runs out when it would be full again, so idle buckets vanish by
 * themselves, and a bucket that is full is deleted rather than written.
 *
 * KEYS: the buckets in check order. ARGV[1]: now in ms; ARGV[2]: cost; then
 * per bucket: capacity, refill per ms, charge on refusal (1 or 0).
 * Returns {allowed (1/0), retry-after seconds, 1-based index of the refusing bucket}.
 */
export const TAKE_SCRIPT = `
local now = tonumber(ARGV[1])
local cost = tonumber(ARGV[2])
local eps = 1e-9
local levels, stamps = {}, {}
local refused = 0
for i = 1, #KEYS do
  local capacity = tonumber(ARGV[i * 3])
  local rate = tonumber(ARGV[i * 3 + 1])
  local state = redis.call('HMGET', KEYS[i], 'tokens', 'at')
  local level, at = capacity, now
  if state[1] and state[2] then
    local before = tonumber(state[2])
    at = math.max(now, before)
    level = math.min(capacity, tonumber(state[1]) + math.max(0, now - before) * rate)
  end
  levels[i], stamps[i] = level, at
  if level + eps < cost then
    refused = i
    break
  end
end

local function write(i)
  local capacity = tonumber(ARGV[i * 3])
  local rate = tonumber(ARGV[i * 3 + 1])
  local tokens = math.min(capacity, levels[i] - cost)
  if tokens >= capacity - eps then
    redis.call('DEL', KEYS[i])
  else
    redis.call('HSET', KEYS[i], 'tokens', tokens, 'at', stamps[i])
    redis.call('PEXPIRE', KEYS[i], math.ceil((capacity - tokens) / rate) + 1000)
  end
end

if refused == 0 then
  for i = 1, #KEYS do write(i) end
  return {1, 0, 0}
end
for i = 1, refused - 1 do
  if ARGV[i * 3 + 2] == '1' then write(i) end
end
local seconds = math.ceil((cost - levels[refused]) / tonumber(ARGV[refused * 3 + 1]) / 1000 - eps)
if seconds < 1 then seconds = 1 end
return {0, seconds, refused}
`;

const runTake = redisScript(TAKE_SCRIPT);

export interface RedisLimiterOptions {
  redis: Redis;
  /** Prepended to every bucket key; one deployment, or one test, per prefix. */
  prefix?: string;
  logger?: Pick<Logger, 'error'>;
  /** Used while Redis cannot answer; defaults to a fresh in-memory limiter. */
  fallback?: MemoryLimiter;
}

export const DEFAULT_REDIS_PREFIX = 'kiln:rl:';
/** Fallback faults are logged at most this often, so an outage does not flood the log. */
const FAULT_LOG_INTERVAL_MS = 30_000;

/**
 * Buckets in Redis. While Redis fails (down, timing out), each process falls
 * back to its own in-memory buckets instead of letting everything through
 * or refusing everything: the limits then hold per process, and monitoring
 * keeps working. The Redis client is the caller's: main.ts opens and closes it.
 */
export function redisLimiter(options: RedisLimiterOptions): Limiter {
  const { redis } = options;
  const prefix = options.prefix ?? DEFAULT_REDIS_PREFIX;
  const fallback = options.fallback ?? memoryLimiter();
  let lastFaultLog = -Infinity;

  return {
    async take(buckets: readonly Bucket[], cost: number, nowMs: number): Promise<TakeResult> {
      if (buckets.length === 0) return ALLOWED;
      const keys = buckets.map((b) => prefix + b.key);
      const args = [String(nowMs), String(cost)];
      for (const b of buckets) args.push(String(b.capacity), String(b.refillPerSecond / 1000), b.chargeOnRefusal ? '1' : '0');
      let reply: [number, number, number];
      try {
        reply = await runTake(redis, keys, args) as [number, number, number];
      } catch (err) {
        if (nowMs - lastFaultLog >= FAULT_LOG_INTERVAL_MS) {
          lastFaultLog = nowMs;
          options.logger?.error({ err }, 'rate limiter: Redis failed; using this process\'s own buckets until it answers');
        }
        return fallback.take(buckets, cost, nowMs);
      }
      const [allowed, retryAfterSeconds, refused] = reply;
      if (allowed === 1) return ALLOWED;
      return { allowed: false, retryAfterSeconds: Number(retryAfterSeconds), refusedAt: Number(refused) - 1 };
    },
    close: () => fallback.close(),
  };
}
