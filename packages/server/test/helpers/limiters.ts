import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Limiter } from '../../src/http/rate-limit/limiter.js';
import { memoryLimiter, type MemoryLimiterOptions } from '../../src/http/rate-limit/memory-limiter.js';
import { redisLimiter } from '../../src/http/rate-limit/redis-limiter.js';

/** The Redis of the Redis-backed suites; they are skipped (and say so) when it is unset, and CI sets it. */
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL || null;
export const SKIP_REDIS = TEST_REDIS_URL ? false : 'TEST_REDIS_URL is not set';

export type BackendName = 'memory' | 'redis';
export const BACKENDS: { name: BackendName; skip: string | false }[] = [
  { name: 'memory', skip: false },
  { name: 'redis', skip: SKIP_REDIS },
];

/**
 * A Redis connection whose keys all start with a prefix of its own, so
 * concurrent suites and runs never share a bucket; dispose deletes exactly
 * those keys and nothing else in the database.
 */
export class TestRedis {
  readonly redis: Redis;
  readonly prefix = `kiln-test:${randomBytes(6).toString('hex')}:`;

  constructor() {
    if (!TEST_REDIS_URL) throw new Error('TEST_REDIS_URL is not set');
    this.redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
  }

  /** A limiter on this connection and prefix; any number of them share the buckets, as processes would. */
  limiter(): Limiter {
    return redisLimiter({ redis: this.redis, prefix: this.prefix });
  }

  async keys(): Promise<string[]> {
    const found: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await this.redis.scan(cursor, 'MATCH', `${this.prefix}*`, 'COUNT', 1000);
      cursor = next;
      found.push(...batch);
    } while (cursor !== '0');
    return found;
  }

  async dispose(): Promise<void> {
    const keys = await this.keys();
    if (keys.length > 0) await this.redis.del(...keys);
    await this.redis.quit();
  }
}

export interface BackendLimiters {
  /** Limiters sharing one set of buckets: several on Redis stand for several processes. */
  make(): Limiter;
  redis: TestRedis | null;
  dispose(): Promise<void>;
}

/** A fresh, empty set of buckets on the named backend. */
export function backendLimiters(name: BackendName, memoryOptions: MemoryLimiterOptions = {}): BackendLimiters {
  if (name === 'memory') {
    const shared = memoryLimiter(memoryOptions);
    return { make: () => shared, redis: null, dispose: () => shared.close() };
  }
  const redis = new TestRedis();
  return { make: () => redis.limiter(), redis, dispose: () => redis.dispose() };
}
