import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { sha256Hex } from '../src/lib/crypto.js';
import { DEFAULT_SHARED_PREFIX } from '../src/shared-state.js';
import { SKIP_REDIS, TEST_REDIS_URL } from './helpers/limiters.js';
import { startServiceProcess } from './helpers/service-process.js';
import { createTestStore, storeKinds } from './helpers/stores.js';

/** One store for both processes: a fresh PostgreSQL database, or one SQLite file (WAL lets two processes share it). */
async function sharedStore(kind: string): Promise<{ env: Record<string, string>; dispose(): Promise<void> }> {
  if (kind !== 'postgres') return { env: {}, dispose: async () => undefined };
  const { store, dispose } = await createTestStore('postgres');
  const { rows } = await sql<{ name: string }>`select current_database() as name`.execute(store.db);
  const url = new URL(process.env.TEST_DATABASE_URL!);
  url.pathname = `/${rows[0]!.name}`;
  return { env: { DATABASE_URL: url.toString() }, dispose };
}

async function scanAll(redis: Redis, pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    found.push(...batch);
  } while (cursor !== '0');
  return found;
}

for (const kind of storeKinds()) {
  describe(`two service processes on one store and one Redis [${kind}]`, { skip: SKIP_REDIS }, () => {
    test('share Idempotency-Keys (a retry on the other process replays) and the ingest gate (one push of many wins)', async () => {
      const store = await sharedStore(kind);
      const dirs = [mkdtempSync(join(tmpdir(), 'kiln-shared-a-')), mkdtempSync(join(tmpdir(), 'kiln-shared-b-'))];
      // The same SECRET_KEY everywhere, as the README asks: sessions verify, and sealed answers open, on either process.
      const env = { REDIS_URL: TEST_REDIS_URL!, SECRET_KEY: randomBytes(32).toString('hex'), RATE_LIMITS_ENABLED: 'false', ...store.env };
      const dataDirB = kind === 'postgres' ? dirs[1]! : dirs[0]!;
      const redis = new Redis(TEST_REDIS_URL!);
      const idemKey = `process-${randomBytes(6).toString('hex')}`;
      const idemPattern = `${DEFAULT_SHARED_PREFIX}idem:*:${sha256Hex(idemKey)}`;
      const collectorKeys: string[] = [];
      const services = [startServiceProcess(dirs[0]!, env)];
      try {
        // One after the other, so only the first migrates the store.
        const a = await services[0]!.listening;
        services.push(startServiceProcess(dataDirB, env));
        const b = await services[1]!.listening;

        const call = (origin: string, method: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
          fetch(`${origin}/api/v1${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
        const reg = await call(a, 'POST', '/auth/register', { email: `shared-${randomBytes(4).toString('hex')}@example.com`, password: 'a long enough password' });
        assert.equal(reg.status, 201);
        const auth = { authorization: `Bearer ${(await reg.json() as { token: string }).token}` };

        const register = (origin: string) => call(origin, 'POST', '/servers', { name: 'shared-proc' }, { ...auth, 'idempotency-key': idemKey });
        const first = await register(a);
        assert.equal(first.status, 201);
        const firstBody = await first.json() as { server: { id: string; api_key: string } };
        const again = await register(b);
        assert.equal(again.status, 201);
        assert.equal(again.headers.get('idempotency-replayed'), 'true');
        assert.deepEqual(await again.json(), firstBody);
        const list = await fetch(`${b}/api/v1/servers`, { headers: auth });
        assert.deepEqual((await list.json() as { servers: { id: string }[] }).servers.map((s) => s.id), [firstBody.server.id]);
        assert.equal((await scanAll(redis, idemPattern)).length, 1, 'the key lives in Redis');

        const snapshot = { timestamp: new Date().toISOString(), system: {} };
        const ingest = (origin: string, key: string) => call(origin, 'POST', '/ingest', snapshot, { authorization: `Bearer ${key}` });
        collectorKeys.push(firstBody.server.api_key);
        assert.equal((await ingest(a, firstBody.server.api_key)).status, 200);
        const refused = await ingest(b, firstBody.server.api_key);
        assert.equal(refused.status, 429);
        const envelope = await refused.json() as { error: string; retry_after_seconds: number };
        assert.equal(envelope.error, 'ingest_too_frequent');
        // Real processes read the real clock: a slow run has used some of the 55 seconds.
        assert.ok(envelope.retry_after_seconds >= 1 && envelope.retry_after_seconds <= 55, String(envelope.retry_after_seconds));
        assert.equal(refused.headers.get('retry-after'), String(envelope.retry_after_seconds));
        assert.equal(await redis.exists(`${DEFAULT_SHARED_PREFIX}gate:${sha256Hex(firstBody.server.api_key)}`), 1, 'the gate lives in Redis');

        const other = await call(b, 'POST', '/servers', { name: 'shared-proc-race' }, auth);
        const key = (await other.json() as { server: { api_key: string } }).server.api_key;
        collectorKeys.push(key);
        const statuses = (await Promise.all(Array.from({ length: 8 }, (_, i) => ingest(i % 2 ? a : b, key)))).map((res) => res.status);
        assert.deepEqual(statuses.sort(), [200, ...Array(7).fill(429)]);

        for (const service of services) {
          service.child.kill('SIGTERM');
          assert.equal(await service.exited, 0, service.output());
        }
      } finally {
        for (const service of services) service.child.kill('SIGKILL');
        const idem = await scanAll(redis, idemPattern);
        const gates = collectorKeys.map((k) => `${DEFAULT_SHARED_PREFIX}gate:${sha256Hex(k)}`);
        if (idem.length + gates.length > 0) await redis.del(...idem, ...gates);
        await redis.quit();
        for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
        await store.dispose();
      }
    });
  });
}
