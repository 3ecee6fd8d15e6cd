import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import pino from 'pino';
import { buildApp } from '../src/app.js';
import { IDEMPOTENCY_LOCK_MS, IDEMPOTENCY_TTL_MS } from '../src/http/idempotency.js';
import { sqlIdempotencyStore, type IdempotencyRow } from '../src/http/idempotency-store.js';
import { closeRedis, openRedis } from '../src/http/rate-limit/redis-client.js';
import { logMailer } from '../src/lib/mailer.js';
import { redisSharedState } from '../src/shared-state.js';
import { api, expectEnvelope, registerUser, startApp, type TestApp } from './helpers/app.js';
import { minimalSnapshot, push, reporter } from './helpers/ingest.js';
import { SKIP_REDIS, TEST_REDIS_URL, TestRedis } from './helpers/limiters.js';
import { accountIdOf } from './helpers/servers.js';
import { idempotencyRows, rawIdempotencyEntry } from './helpers/shared-state.js';
import { storeKinds } from './helpers/stores.js';

/** A logger whose lines a test can read back, parsed. */
function capturingLogger() {
  const lines: { level: number; msg: string }[] = [];
  const logger = pino({ level: 'info' }, new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  }));
  return { logger, lines, said: (prefix: string) => lines.filter((l) => l.msg.startsWith(prefix)) };
}

/** A local port nothing listens on: taken from the system, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

for (const kind of storeKinds()) {
  describe(`Redis unreachable: idempotency keys and the ingest gate use the store [${kind}]`, () => {
    const t = { kind } as TestApp;
    const log = capturingLogger();
    let dead: Redis;
    let o: TestApp;
    before(async () => {
      Object.assign(t, await startApp(kind));
      // The service's own client (main.ts), pointed at a closed port: it fails at start and keeps retrying.
      dead = await openRedis(`redis://127.0.0.1:${await closedPort()}`, log.logger);
      const shared = redisSharedState({ redis: dead, db: t.store.db, logger: log.logger });
      const app = await buildApp({ config: t.config, store: t.store, clock: t.clock, mailer: logMailer(log.logger), logger: log.logger, fetch: globalThis.fetch, shared });
      await app.ready();
      o = { ...t, app };
    });
    after(async () => {
      await o.app.close();
      await closeRedis(dead);
      await t.close();
    });

    test('Idempotency-Key: claim, replay, reuse and release all work through the store; never a 500', async () => {
      const u = await registerUser(o);
      const post = (key: string, body: unknown) => api(o, 'POST', '/api/v1/servers', { token: u.token, body, headers: { 'idempotency-key': key } });
      const first = await post('outage-1', { name: 'outage-server' });
      assert.equal(first.status, 201);
      const again = await post('outage-1', { name: 'outage-server' });
      assert.equal(again.headers['idempotency-replayed'], 'true');
      assert.deepEqual(again.body, first.body);
      expectEnvelope(await post('outage-1', { name: 'outage-other' }), 422, 'idempotency_key_reused');
      const entry = await rawIdempotencyEntry(o, await accountIdOf(o, u), 'outage-1');
      assert.equal(entry?.state, 'done', 'the key went to the store\'s table');
      assert.equal((await o.store.db.selectFrom('servers').select('id').where('name', '=', 'outage-server').execute()).length, 1);
    });

    test('ingest: the store\'s gate holds alone', async () => {
      const r = await reporter(o);
      assert.equal((await push(o, r.key, minimalSnapshot())).status, 200);
      const refused = expectEnvelope(await push(o, r.key, minimalSnapshot()), 429, 'ingest_too_frequent');
      assert.equal(refused.retry_after_seconds, 55);
      o.clock.advance(55_000);
      assert.equal((await push(o, r.key, minimalSnapshot())).status, 200);
    });

    test('each feature reports the outage once, as a warning, however many requests fell back', async () => {
      const u = await registerUser(o);
      const r = await reporter(o, {}, u);
      for (let i = 0; i < 3; i++) {
        assert.equal((await api(o, 'POST', '/api/v1/servers', { token: u.token, body: {}, headers: { 'idempotency-key': `log-${i}` } })).status, 201);
        assert.equal((await push(o, r.key, minimalSnapshot())).status, i === 0 ? 200 : 429);
      }
      assert.equal(log.said('idempotency: Redis failed').length, 1, JSON.stringify(log.lines));
      assert.equal(log.said('ingest gate: Redis failed').length, 1);
      for (const line of log.said('idempotency: Redis failed').concat(log.said('ingest gate: Redis failed'))) assert.equal(line.level, 40);
    });
  });
}

describe('Redis lost and back: idempotency claims follow it, and each claim is finished where it was made', { skip: SKIP_REDIS }, () => {
  const kind = storeKinds()[0]!;
  const t = { kind } as TestApp;
  const scratch = { redis: null as TestRedis | null };
  before(async () => {
    Object.assign(t, await startApp(kind));
    scratch.redis = new TestRedis();
  });
  after(async () => {
    await scratch.redis!.dispose();
    await t.close();
  });

  test('a claim made while Redis was down lives in the store; once Redis answers, new claims go there again', async () => {
    const log = capturingLogger();
    // A connection of the service's kind (no offline queue) that the test drops and reopens: a real outage of this client.
    const client = new Redis(TEST_REDIS_URL!, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    await client.connect();
    try {
      const { idempotency } = redisSharedState({ redis: client, prefix: scratch.redis!.prefix, db: t.store.db, logger: log.logger });
      const now = t.clock.now().getTime();
      const row = (key: string): IdempotencyRow => ({
        account_id: 'acc_outage', idem_key: key, request_hash: 'h', state: 'in_flight', status_code: null, response_body: null,
        created_at: new Date(now).toISOString(), locked_until: new Date(now + IDEMPOTENCY_LOCK_MS).toISOString(),
        expires_at: new Date(now + IDEMPOTENCY_TTL_MS).toISOString(),
      });
      const first = row('first');
      assert.deepEqual(await idempotency.claim(first), { kind: 'claimed' });

      const ended = once(client, 'end');
      client.disconnect();
      const during = row('during');
      assert.deepEqual(await idempotency.claim(during), { kind: 'claimed' });
      assert.equal(await idempotencyRows(t.store), 1, 'the claim went to the store');
      await idempotency.complete(first, 201, 'sealed-first'); // Redis down: left to its lock, no error

      await ended;
      await client.connect();
      await idempotency.complete(during, 201, 'sealed-during');
      const stored = await sqlIdempotencyStore(t.store.db).claim(row('during'));
      assert.equal(stored.kind === 'held' && stored.entry.response_body, 'sealed-during', 'finished in the store, where it was claimed');
      assert.deepEqual(await idempotency.claim(row('later')), { kind: 'claimed' });
      assert.equal(await idempotencyRows(t.store), 1, 'the next claim went to Redis again');
      const held = await idempotency.claim(row('first'));
      assert.equal(held.kind === 'held' && held.entry.state, 'in_flight', 'the completion lost in the outage was not invented');

      assert.deepEqual(log.lines.map((l) => [l.level, l.msg]), [
        [40, 'idempotency: Redis failed; until it answers again, keys are claimed in the store'],
        [30, 'idempotency: Redis answers again'],
      ]);
    } finally {
      client.disconnect();
    }
  });
});
