import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import type { Bucket, Limiter } from '../src/http/rate-limit/limiter.js';
import { memoryLimiter } from '../src/http/rate-limit/memory-limiter.js';
import { redisLimiter } from '../src/http/rate-limit/redis-limiter.js';
import { BACKENDS, SKIP_REDIS, TestRedis, backendLimiters, type BackendLimiters } from './helpers/limiters.js';

const T0 = Date.parse('2026-11-22T12:00:00.000Z');
let seq = 0;
const bucket = (capacity: number, refillPerSecond: number, extra: Partial<Bucket> = {}): Bucket =>
  ({ key: `b${++seq}`, capacity, refillPerSecond, ...extra });

async function drain(limiter: Limiter, b: Bucket, now: number): Promise<void> {
  const result = await limiter.take([b], b.capacity, now);
  assert.equal(result.allowed, true);
}

for (const backend of BACKENDS) {
  describe(`limiter backend [${backend.name}]`, { skip: backend.skip }, () => {
    let limiters: BackendLimiters;
    let limiter: Limiter;
    before(() => {
      limiters = backendLimiters(backend.name);
      limiter = limiters.make();
    });
    after(() => limiters.dispose());

    test('Retry-After is the time until one token is back, rounded up; waiting that long is enough', async () => {
      // Slow tiers, where one token takes whole seconds: not a millisecond early, and exactly one token.
      for (const [capacity, perSecond, expected] of [[10, 10 / 3600, 360], [100, 100 / 3600, 36], [10, 10 / 900, 90]] as const) {
        const b = bucket(capacity, perSecond);
        await drain(limiter, b, T0);
        assert.deepEqual(await limiter.take([b], 1, T0), { allowed: false, retryAfterSeconds: expected, refusedAt: 0 }, `${capacity} @ ${perSecond}/s`);
        assert.equal((await limiter.take([b], 1, T0 + expected * 1000 - 1)).allowed, false, 'not a millisecond early');
        assert.equal((await limiter.take([b], 1, T0 + expected * 1000)).allowed, true);
        assert.equal((await limiter.take([b], 1, T0 + expected * 1000)).allowed, false, 'exactly one token came back');
      }
      // Fast tiers get a token back within a second, and Retry-After is never below 1.
      for (const [capacity, perSecond] of [[100, 10], [1000, 100], [5000, 500]] as const) {
        const b = bucket(capacity, perSecond);
        await drain(limiter, b, T0);
        assert.deepEqual(await limiter.take([b], 1, T0), { allowed: false, retryAfterSeconds: 1, refusedAt: 0 });
        assert.equal((await limiter.take([b], 1, T0 + 1000 / perSecond)).allowed, true);
      }
    });

    test('part of a token counts towards the wait: 950 ms after draining 10/s, one second is still announced', async () => {
      const b = bucket(100, 10);
      await drain(limiter, b, T0);
      assert.equal((await limiter.take([b], 1, T0 + 50)).retryAfterSeconds, 1);
      const slow = bucket(10, 10 / 3600);
      await drain(limiter, slow, T0);
      assert.equal((await limiter.take([slow], 1, T0 + 300_000)).retryAfterSeconds, 60, '5 of 6 minutes gone');
    });

    test('the first refusing bucket wins; only charge-on-refusal buckets before it pay', async () => {
      const ip = bucket(100, 10, { chargeOnRefusal: true });
      const key = bucket(1000, 100);
      const empty = bucket(10, 10 / 3600);
      const later = bucket(5, 1);
      await drain(limiter, empty, T0);
      const refused = await limiter.take([ip, key, empty, later], 1, T0);
      assert.deepEqual(refused, { allowed: false, retryAfterSeconds: 360, refusedAt: 2 });
      // ip paid one token; key and later paid nothing.
      assert.equal((await limiter.take([ip], 99, T0)).allowed, true);
      assert.equal((await limiter.take([ip], 1, T0)).allowed, false);
      assert.equal((await limiter.take([key], 1000, T0)).allowed, true);
      assert.equal((await limiter.take([later], 5, T0)).allowed, true);
    });

    test('an allowed take debits every bucket; a refused one without charge-on-refusal debits none', async () => {
      const a = bucket(3, 1);
      const b = bucket(2, 1);
      assert.equal((await limiter.take([a, b], 1, T0)).allowed, true);
      assert.equal((await limiter.take([a, b], 1, T0)).allowed, true);
      assert.deepEqual(await limiter.take([a, b], 1, T0), { allowed: false, retryAfterSeconds: 1, refusedAt: 1 });
      assert.equal((await limiter.take([a], 1, T0)).allowed, true, 'a kept its third token');
    });

    test('a negative cost gives tokens back, never above the capacity', async () => {
      const b = bucket(10, 10 / 900);
      await drain(limiter, b, T0);
      await limiter.take([b], -1, T0);
      assert.equal((await limiter.take([b], 1, T0)).allowed, true);
      await limiter.take([b], -50, T0);
      assert.equal((await limiter.take([b], 10, T0)).allowed, true);
      assert.equal((await limiter.take([b], 1, T0)).allowed, false);
    });

    test('a clock that goes back neither refills nor breaks a bucket', async () => {
      const b = bucket(10, 1);
      await drain(limiter, b, T0);
      assert.equal((await limiter.take([b], 1, T0 - 60_000)).allowed, false);
      assert.equal((await limiter.take([b], 1, T0 + 1000)).allowed, true);
    });

    test('concurrent takes never overdraw, from any number of limiters on the same buckets', async () => {
      const b = bucket(100, 10);
      const all = Array.from({ length: 4 }, () => limiters.make());
      const results = await Promise.all(Array.from({ length: 300 }, (_, i) => all[i % 4]!.take([b], 1, T0)));
      assert.equal(results.filter((r) => r.allowed).length, 100);
    });
  });
}

describe('memory backend: idle buckets and the bound', () => {
  test('a bucket that is full again is forgotten', async () => {
    const limiter = memoryLimiter();
    const b = bucket(100, 10);
    await limiter.take([b], 30, T0);
    assert.equal(limiter.size, 1);
    // Refilling takes 3 s; the sweep drops the entry on a later take once that has passed.
    await limiter.take([bucket(5, 5)], 0, T0 + 2_999);
    assert.equal(limiter.size, 1);
    for (let i = 0; i < 3; i++) await limiter.take([], 0, T0 + 3_000);
    assert.equal(limiter.size, 0);
    assert.equal((await limiter.take([b], 100, T0 + 3_000)).allowed, true, 'and it comes back full');
  });

  test('a flood of distinct addresses stays within the cap, and the limits still hold', async () => {
    const limiter = memoryLimiter({ maxBuckets: 1000 });
    for (let i = 0; i < 20_000; i++) await limiter.take([{ key: `ip:10.0.${i >> 8}.${i & 255}`, capacity: 100, refillPerSecond: 10 }], 1, T0);
    assert.ok(limiter.size <= 1000, `size ${limiter.size}`);
    const attacker = bucket(100, 10);
    await drain(limiter, attacker, T0);
    assert.equal((await limiter.take([attacker], 1, T0)).allowed, false);
    // An active client is the most recently used: the flood does not evict it before it goes idle.
    for (let i = 0; i < 500; i++) await limiter.take([{ key: `ip:flood-${i}`, capacity: 100, refillPerSecond: 10 }], 1, T0);
    assert.equal((await limiter.take([attacker], 1, T0)).allowed, false);
  });
});

describe('redis backend: expiry, script cache, outage', { skip: SKIP_REDIS }, () => {
  let redis: TestRedis;
  before(() => {
    redis = new TestRedis();
  });
  after(() => redis.dispose());

  test('each bucket key expires when the bucket would be full again; a full bucket is deleted', async () => {
    const limiter = redis.limiter();
    const b = bucket(100, 10);
    await limiter.take([b], 30, Date.now());
    const ttl = await redis.redis.pttl(redis.prefix + b.key);
    assert.ok(ttl > 2_000 && ttl <= 4_000, `ttl ${ttl} ms: 3 s to refill, plus a second of slack for clocks`);
    await limiter.take([b], -30, Date.now());
    assert.equal(await redis.redis.exists(redis.prefix + b.key), 0);
    const hourly = bucket(10, 10 / 3600);
    await limiter.take([hourly], 1, Date.now());
    const hourTtl = await redis.redis.pttl(redis.prefix + hourly.key);
    assert.ok(hourTtl > 355_000 && hourTtl <= 361_000, `ttl ${hourTtl} ms for one token at 10/h`);
  });

  test('the script is loaded again when Redis has forgotten it (EVALSHA falls back to EVAL)', async () => {
    const limiter = redis.limiter();
    const b = bucket(2, 1);
    await limiter.take([b], 1, T0);
    await redis.redis.script('FLUSH');
    assert.equal((await limiter.take([b], 1, T0)).allowed, true);
    assert.equal((await limiter.take([b], 1, T0)).allowed, false);
  });

  test('while Redis is unreachable each process falls back to its own buckets, and says so once', async () => {
    const dead = new Redis('redis://127.0.0.1:1', { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
    const errors: unknown[] = [];
    const limiter = redisLimiter({ redis: dead, logger: { error: (obj: unknown) => errors.push(obj) } as never });
    const b = bucket(3, 1);
    const results = [];
    for (let i = 0; i < 4; i++) results.push((await limiter.take([b], 1, T0)).allowed);
    assert.deepEqual(results, [true, true, true, false]);
    assert.equal(errors.length, 1);
    dead.disconnect();
  });
});
