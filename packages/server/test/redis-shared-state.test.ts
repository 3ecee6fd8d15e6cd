import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { INGEST_GATE_MS } from '../src/features/ingest/service.js';
import { sha256Hex } from '../src/lib/crypto.js';
import { logMailer } from '../src/lib/mailer.js';
import { redisSharedState } from '../src/shared-state.js';
import { api, expectEnvelope, registerUser, startApp, type ApiResponse, type TestApp } from './helpers/app.js';
import { fixtureText, minimalSnapshot, push, reporter, sampleCount, serverRow } from './helpers/ingest.js';
import { SKIP_REDIS } from './helpers/limiters.js';
import { accountIdOf, trashServer } from './helpers/servers.js';
import { idempotencyRows, rawIdempotencyEntry } from './helpers/shared-state.js';
import { storeKinds } from './helpers/stores.js';

function expectTooFrequent(res: ApiResponse, seconds: number): void {
  const envelope = expectEnvelope(res, 429, 'ingest_too_frequent');
  assert.equal(envelope.retry_after_seconds, seconds, res.raw);
  assert.equal(res.headers['retry-after'], String(seconds));
}

async function serverCount(t: TestApp, name: string): Promise<number> {
  return (await t.store.db.selectFrom('servers').select('id').where('name', '=', name).execute()).length;
}

for (const kind of storeKinds()) {
  describe(`two app instances sharing idempotency keys and the ingest gate through Redis [${kind}]`, { skip: SKIP_REDIS }, () => {
    const t = { kind } as TestApp;
    /** The second instance, as a second process would be: the same store, the same Redis and prefix, its own app. */
    let second: FastifyInstance;
    let b: TestApp;
    before(async () => {
      Object.assign(t, await startApp(kind, { redis: true }));
      const logger = pino({ level: 'silent' });
      const shared = redisSharedState({ redis: t.redis!.redis, prefix: t.redis!.prefix, db: t.store.db, logger });
      second = await buildApp({ config: t.config, store: t.store, clock: t.clock, mailer: logMailer(logger), logger, fetch: globalThis.fetch, shared });
      await second.ready();
      b = { ...t, app: second };
    });
    after(async () => {
      await second.close();
      await t.close();
    });

    const register = (on: TestApp, token: string, key: string, body: unknown) =>
      api(on, 'POST', '/api/v1/servers', { token, body, headers: { 'idempotency-key': key } });
    const gateKeys = async () => (await t.redis!.keys()).filter((k) => k.startsWith(`${t.redis!.prefix}gate:`));

    test('a POST /servers retried through the other instance replays the stored answer and creates one server', async () => {
      const u = await registerUser(t);
      const first = await register(t, u.token, 'cross-1', { name: 'x-replay' });
      assert.equal(first.status, 201);
      const again = await register(b, u.token, 'cross-1', { name: 'x-replay' });
      assert.equal(again.status, 201);
      assert.equal(again.headers['idempotency-replayed'], 'true');
      assert.deepEqual(again.body, first.body);
      expectEnvelope(await register(b, u.token, 'cross-1', { name: 'x-other' }), 422, 'idempotency_key_reused');
      assert.equal(await serverCount(t, 'x-replay'), 1);
      assert.equal(await idempotencyRows(t.store), 0, 'the key lives in Redis, not in the store');
    });

    test('concurrent requests with one key on both instances create one server', async () => {
      const u = await registerUser(t);
      for (let round = 0; round < 5; round++) {
        const name = `x-race-${round}`;
        const results = await Promise.all([t, b, t, b].map((on) => register(on, u.token, `x-race-${round}`, { name })));
        const fresh = results.filter((r) => r.status === 201 && r.headers['idempotency-replayed'] === undefined);
        assert.equal(fresh.length, 1, `round ${round}: ${results.map((r) => r.status).join(', ')}`);
        for (const other of results.filter((r) => r !== fresh[0])) {
          if (other.status === 409) expectEnvelope(other, 409, 'idempotency_in_flight');
          else assert.equal(other.body.server.id, fresh[0]!.body.server.id);
        }
        assert.equal(await serverCount(t, name), 1);
      }
    });

    test('Redis key names carry a hash of the client\'s key, never its text; entries expire only well after they matter', async () => {
      const u = await registerUser(t);
      const clientKey = `Client Key ${randomBytes(4).toString('hex')}`;
      assert.equal((await register(t, u.token, clientKey, { name: 'x-names' })).status, 201);
      const account = `${t.redis!.prefix}idem:${await accountIdOf(t, u)}:`;
      const idem = (await t.redis!.keys()).filter((k) => k.startsWith(account));
      assert.deepEqual(idem, [account + sha256Hex(clientKey)]);
      assert.ok((await t.redis!.redis.pttl(idem[0]!)) > 24 * 3_600_000, 'a finished entry outlives its 24 hours in Redis');
      const entry = await rawIdempotencyEntry(t, await accountIdOf(t, u), clientKey);
      assert.equal(entry?.state, 'done');

      const r = await reporter(t);
      assert.equal((await push(t, r.key, minimalSnapshot())).status, 200);
      const gate = `${t.redis!.prefix}gate:${sha256Hex(r.key)}`;
      assert.ok(!gate.includes(r.key));
      const ttl = await t.redis!.redis.pttl(gate);
      assert.ok(ttl > INGEST_GATE_MS && ttl <= 2 * INGEST_GATE_MS, `gate expiry ${ttl} ms`);
    });

    test('two pushes for one server through different instances within 55 s: one 200, then 429 with the seconds left', async () => {
      const r = await reporter(t);
      assert.equal((await push(t, r.key, minimalSnapshot())).status, 200);
      t.clock.advance(10_000);
      expectTooFrequent(await push(b, r.key, minimalSnapshot()), 45);
      t.clock.advance(44_999);
      expectTooFrequent(await push(t, r.key, minimalSnapshot()), 1);
      t.clock.advance(1);
      assert.equal((await push(b, r.key, minimalSnapshot())).status, 200);
      assert.equal(await sampleCount(t, r.server.id), 2);
    });

    test('parallel pushes for one server across both instances: exactly one is accepted', async () => {
      const r = await reporter(t);
      const body = fixtureText('snapshot-baremetal.json');
      for (let round = 0; round < 4; round++) {
        const results = await Promise.all(Array.from({ length: 8 }, (_, i) => push(i % 2 ? b : t, r.key, body)));
        const statuses = results.map((res) => res.status).sort();
        assert.deepEqual(statuses, [200, ...Array(7).fill(429)], `round ${round}: ${results.map((res) => res.raw).join('\n')}`);
        for (const res of results.filter((x) => x.status === 429)) expectTooFrequent(res, 55);
        t.clock.advance(INGEST_GATE_MS);
      }
      assert.equal(await sampleCount(t, r.server.id), 4);
    });

    test('the gate in Redis refuses without asking the store: a store that forgot the last push is not even touched', async () => {
      const r = await reporter(t);
      assert.equal((await push(t, r.key, minimalSnapshot())).status, 200);
      await t.store.db.updateTable('servers').set({ last_ingest_at: null }).where('id', '=', r.server.id).execute();
      t.clock.advance(20_000);
      expectTooFrequent(await push(b, r.key, minimalSnapshot()), 35);
      assert.equal((await serverRow(t, r.server.id)).last_ingest_at, null, 'the store\'s claim never ran');
    });

    test('when Redis forgot a pass, the store\'s gate still refuses, and the pass it refused is released', async () => {
      const r = await reporter(t);
      assert.equal((await push(t, r.key, minimalSnapshot())).status, 200);
      const gate = `${t.redis!.prefix}gate:${sha256Hex(r.key)}`;
      await t.redis!.redis.del(gate);
      t.clock.advance(5_000);
      expectTooFrequent(await push(b, r.key, minimalSnapshot()), 50);
      assert.equal(await t.redis!.redis.exists(gate), 0, 'the refused push left no pass behind');
      t.clock.advance(50_000);
      assert.equal((await push(t, r.key, minimalSnapshot())).status, 200);
      assert.equal(await t.redis!.redis.get(gate), String(t.clock.now().getTime()));
    });

    test('keys the store refuses leave nothing in Redis and block nothing: random keys, a trashed server', async () => {
      const before = (await gateKeys()).length;
      const floods = await Promise.all(Array.from({ length: 40 }, () => push(t, `col_${randomBytes(20).toString('hex')}`, minimalSnapshot())));
      assert.deepEqual([...new Set(floods.map((res) => res.status))], [401]);
      assert.equal((await gateKeys()).length, before, 'no entry per random key');

      const r = await reporter(t);
      assert.equal((await push(t, r.key, { timestamp: 'not a time', system: {} })).status, 400, 'a rejected body never reaches the gate');
      await trashServer(t, r.user.token, r.server.id);
      expectEnvelope(await push(t, r.key, minimalSnapshot()), 401, 'invalid_collector_key');
      expectEnvelope(await push(b, r.key, minimalSnapshot()), 401, 'invalid_collector_key');
      assert.equal((await gateKeys()).length, before);
      assert.equal((await api(t, 'POST', `/api/v1/servers/${r.server.id}/restore`, { token: r.user.token })).status, 200);
      assert.equal((await push(b, r.key, minimalSnapshot())).status, 200, 'the 401s left no pass that would refuse it');
    });
  });
}
