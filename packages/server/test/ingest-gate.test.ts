import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import pino from 'pino';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { INGEST_GATE_MS } from '../src/features/ingest/service.js';
import { logMailer } from '../src/lib/mailer.js';
import { redisSharedState } from '../src/shared-state.js';
import { openStore, type Store } from '../src/store/db.js';
import { describeEachStore, expectEnvelope, testConfig, type ApiResponse, type TestApp } from './helpers/app.js';
import { fixtureText, latestRow, minimalSnapshot, push, reporter, sampleCount, serverRow } from './helpers/ingest.js';
import { SHARED_BACKENDS } from './helpers/shared-state.js';

function expectTooFrequent(res: ApiResponse, seconds: number): void {
  const envelope = expectEnvelope(res, 429, 'ingest_too_frequent');
  assert.equal(envelope.retry_after_seconds, seconds, res.raw);
  assert.equal(res.headers['retry-after'], String(seconds));
  assert.equal(envelope.retryable, true);
}

/** A second service process: its own app and its own store connection, on the same PostgreSQL database (and Redis) as `t`. */
async function secondProcess(t: TestApp): Promise<{ app: FastifyInstance; store: Store; close(): Promise<void> }> {
  const { rows } = await sql<{ name: string }>`select current_database() as name`.execute(t.store.db);
  const url = new URL(process.env.TEST_DATABASE_URL!);
  url.pathname = `/${rows[0]!.name}`;
  const store = openStore({ databaseUrl: url.toString(), dataDir: '', poolSize: 4 });
  const logger = pino({ level: 'silent' }, new Writable({ write: (_c, _e, done) => done() }));
  const mailer = logMailer(logger);
  const shared = t.redis ? redisSharedState({ redis: t.redis.redis, prefix: t.redis.prefix, db: store.db }) : undefined;
  const app = await buildApp({ config: testConfig(), store, clock: t.clock, mailer, logger, fetch: globalThis.fetch, shared });
  await app.ready();
  return {
    app, store,
    async close() {
      await app.close();
      await mailer.close();
      await store.close();
    },
  };
}

// Every case runs with the store's gate alone (no REDIS_URL) and with Redis's in front of it: the two must answer alike.
for (const backend of SHARED_BACKENDS) describeEachStore(`the 55-second ingest gate (${backend.name === 'redis' ? 'Redis, then the store' : 'the store alone'})`, (t) => {
  test('a second push within 55 s is 429 ingest_too_frequent with Retry-After = seconds left, rounded up', async () => {
    const r = await reporter(t);
    assert.equal((await push(t, r.key, minimalSnapshot())).status, 200);
    expectTooFrequent(await push(t, r.key, minimalSnapshot()), 55);
    t.clock.advance(1);
    expectTooFrequent(await push(t, r.key, minimalSnapshot()), 55);
    t.clock.advance(10_000 - 1);
    expectTooFrequent(await push(t, r.key, minimalSnapshot()), 45);
    t.clock.advance(500);
    expectTooFrequent(await push(t, r.key, minimalSnapshot()), 45);
    t.clock.advance(44_499);
    expectTooFrequent(await push(t, r.key, minimalSnapshot()), 1);
    assert.equal(await sampleCount(t, r.server.id), 1, 'refused pushes store nothing');
  });

  test('exactly 55 s after the last accepted push, the next one is accepted', async () => {
    const r = await reporter(t);
    assert.equal((await push(t, r.key, minimalSnapshot())).status, 200);
    const first = t.clock.now().toISOString();
    t.clock.advance(INGEST_GATE_MS);
    const second = await push(t, r.key, fixtureText('snapshot-vm-debian12.json'));
    assert.equal(second.status, 200, second.raw);
    assert.notEqual(second.body.received_at, first);
    assert.equal((await serverRow(t, r.server.id)).last_ingest_at, second.body.received_at);
    assert.equal((await latestRow(t, r.server.id))!.received_at, second.body.received_at, 'the latest snapshot is replaced');
    assert.equal(await sampleCount(t, r.server.id), 2);
  });

  test('refused pushes do not move the gate: it counts from the last accepted one', async () => {
    const r = await reporter(t);
    assert.equal((await push(t, r.key, minimalSnapshot())).status, 200);
    for (let i = 0; i < 5; i++) {
      t.clock.advance(10_000);
      assert.equal((await push(t, r.key, minimalSnapshot())).status, 429);
    }
    t.clock.advance(5_000);
    assert.equal((await push(t, r.key, minimalSnapshot())).status, 200);
  });

  test('the gate is per server', async () => {
    const a = await reporter(t);
    const b = await reporter(t, {}, a.user);
    assert.equal((await push(t, a.key, minimalSnapshot())).status, 200);
    assert.equal((await push(t, b.key, minimalSnapshot())).status, 200);
  });

  test('concurrent pushes for one server: exactly one is accepted', async () => {
    const r = await reporter(t);
    const body = fixtureText('snapshot-baremetal.json');
    for (let round = 0; round < 5; round++) {
      const results = await Promise.all([push(t, r.key, body), push(t, r.key, body), push(t, r.key, body)]);
      const statuses = results.map((res) => res.status).sort();
      assert.deepEqual(statuses, [200, 429, 429], `round ${round}: ${results.map((res) => res.raw).join('\n')}`);
      for (const res of results.filter((x) => x.status === 429)) expectTooFrequent(res, 55);
      t.clock.advance(INGEST_GATE_MS);
    }
    assert.equal(await sampleCount(t, r.server.id), 5);
  });

  test('two service processes on one PostgreSQL database: of concurrent pushes exactly one wins', async (ctx) => {
    if (t.kind !== 'postgres') {
      ctx.skip('needs PostgreSQL: the embedded store belongs to one process');
      return;
    }
    const other = await secondProcess(t);
    try {
      const r = await reporter(t);
      const payload = fixtureText('snapshot-large-host.json');
      const send = (app: FastifyInstance) => app.inject({
        method: 'POST', url: '/api/v1/ingest', payload,
        headers: { authorization: `Bearer ${r.key}`, 'content-type': 'application/json' },
      });
      for (let round = 0; round < 8; round++) {
        const results = await Promise.all([send(t.app), send(other.app), send(t.app), send(other.app)]);
        const statuses = results.map((res) => res.statusCode).sort();
        assert.deepEqual(statuses, [200, 429, 429, 429], `round ${round}: ${results.map((res) => res.body).join('\n')}`);
        t.clock.advance(INGEST_GATE_MS);
      }
      assert.equal(await sampleCount(t, r.server.id), 8);
    } finally {
      await other.close();
    }
  });
}, { redis: backend.redis });
