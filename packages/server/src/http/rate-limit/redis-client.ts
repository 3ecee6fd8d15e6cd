import { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** Connection errors repeat on every reconnect attempt; one line per this interval is enough. */
const ERROR_LOG_INTERVAL_MS = 30_000;

/**
 * The service's Redis connection. Commands fail at once while it is down
 * (no offline queue, one retry, a short timeout) so a request never waits on
 * Redis: the limiter falls back to per-process buckets instead, and the
 * client keeps reconnecting in the background.
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
    logger.error({ err }, 'Redis is not reachable at start; rate limits hold per process until it is');
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
