import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** Connection errors repeat on every reconnect attempt; one line per this interval is enough. */
const ERROR_LOG_INTERVAL_MS = 30_000;

/**
 * The service's Redis connection. Commands fail at once while it is down
 * (no offline queue, one retry, a short timeout) so a request never waits on
 * Redis: the limiter falls back to per-process buckets, idempotency keys and
 * the ingest gate to the store, and the client keeps reconnecting in the
 * background.
 */
export async function openRedis(url: string, logger: Logger): Promise<Redis> {
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 500,
    connectTimeout: 2_000,
    // Concurrent requests' limiter calls leave in one write: less CPU per call under load.
    enableAutoPipelining: true,
  });
  let lastLogged = -Infinity;
  redis.on('error', (err) => {
    const now = Date.now();
    if (now - lastLogged < ERROR_LOG_INTERVAL_MS) return;
    lastLogged = now;
    logger.warn({ err }, 'Redis connection failed; retrying in the background');
  });
  try {
    await redis.connect();
  } catch (err) {
    logger.error({ err }, 'Redis is not reachable at start; until it is, rate limits hold per process and idempotency keys and the ingest gate live in the store');
  }
  return redis;
}

export async function closeRedis(redis: Redis): Promise<void> {
  try {
    await redis.quit();
  } catch {
    redis.disconnect();
  }
}

export type RedisScript = (redis: Redis, keys: readonly string[], args: readonly (string | number)[]) => Promise<unknown>;

/**
 * A Lua script run by its SHA1 (EVALSHA); when Redis answers NOSCRIPT (it
 * restarted, or SCRIPT FLUSH ran) it is sent whole once (EVAL caches it again).
 */
export function redisScript(source: string): RedisScript {
  const sha = createHash('sha1').update(source).digest('hex');
  return async (redis, keys, args) => {
    try {
      return await redis.evalsha(sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      return await redis.eval(source, keys.length, ...keys, ...args);
    }
  };
}

/**
 * Runs a step on Redis, or its fallback while Redis fails (down, timing out,
 * refusing). An outage is logged once, as a warning when the first step
 * fails, and its end once, when a step succeeds again; the steps in between
 * stay quiet, however many there are.
 */
export function redisOrFallback(logger: Pick<Logger, 'warn' | 'info'> | undefined, what: string, meanwhile: string) {
  let down = false;
  return async function guarded<T>(onRedis: () => Promise<T>, fallback: () => T | Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await onRedis();
    } catch (err) {
      if (!down) {
        down = true;
        logger?.warn({ err }, `${what}: Redis failed; until it answers again, ${meanwhile}`);
      }
      return fallback();
    }
    if (down) {
      down = false;
      logger?.info(`${what}: Redis answers again`);
    }
    return result;
  };
}
