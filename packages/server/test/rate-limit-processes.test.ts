import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { DEFAULT_REDIS_PREFIX } from '../src/http/rate-limit/redis-limiter.js';
import { SKIP_REDIS, TEST_REDIS_URL } from './helpers/limiters.js';
import { startServiceProcess } from './helpers/service-process.js';

describe('two service processes on one Redis', { skip: SKIP_REDIS }, () => {
  test('share the per-IP bucket of a client, and close their Redis connection on SIGTERM', async () => {
    // A client address of this run only (CGNAT range): no other run or suite touches its bucket.
    const client = `100.${64 + randomInt(64)}.${randomInt(256)}.${randomInt(256)}`;
    const bucketKey = `${DEFAULT_REDIS_PREFIX}ip:${client}`;
    // One token an hour: nothing refills while the test runs, however slow the machine.
    const env = { REDIS_URL: TEST_REDIS_URL!, TRUST_PROXY: 'true', RATE_LIMITS: 'ip:100:1/h' };
    const dirs = [mkdtempSync(join(tmpdir(), 'kiln-rl-a-')), mkdtempSync(join(tmpdir(), 'kiln-rl-b-'))];
    const services = dirs.map((dir) => startServiceProcess(dir, env));
    const redis = new Redis(TEST_REDIS_URL!);
    try {
      const [a, b] = await Promise.all(services.map((s) => s.listening));
      const get = (origin: string) => fetch(`${origin}/healthz`, { headers: { 'x-forwarded-for': client } });
      for (let i = 0; i < 100; i++) assert.equal((await get(i % 2 ? a! : b!)).status, 200, `request ${i + 1}`);
      for (const origin of [a!, b!]) {
        const refused = await get(origin);
        assert.equal(refused.status, 429);
        // Real processes read the real clock: the hour is counted from the first debit, so a slow run sees 3599 or less.
        const wait = Number(refused.headers.get('retry-after'));
        assert.ok(wait > 3000 && wait <= 3600, `Retry-After ${wait}`);
        const body = await refused.json() as { error: string; retry_after_seconds: number };
        assert.equal(body.error, 'rate_limited');
        assert.equal(body.retry_after_seconds, wait);
      }
      assert.equal(await redis.exists(bucketKey), 1, 'the bucket lives in Redis');
      for (const service of services) {
        service.child.kill('SIGTERM');
        assert.equal(await service.exited, 0, service.output());
        assert.match(service.output(), /"msg":"stopped"/);
      }
    } finally {
      for (const service of services) service.child.kill('SIGKILL');
      await redis.del(bucketKey);
      await redis.quit();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    }
  });
});
