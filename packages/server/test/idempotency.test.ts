import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { registerAuth, type Principal } from '../src/http/auth.js';
import { ApiError } from '../src/http/errors.js';
import { registerErrorHandling } from '../src/http/errors-plugin.js';
import { IDEMPOTENCY_LOCK_MS, IDEMPOTENCY_TTL_MS, registerIdempotency, requestHash } from '../src/http/idempotency.js';
import '../src/http/route-config.js';
import { redisSharedState } from '../src/shared-state.js';
import type { Store } from '../src/store/db.js';
import { api, createKey, describeEachStore, expectEnvelope, registerUser, type TestApp } from './helpers/app.js';
import { FakeClock } from './helpers/clock.js';
import { TestRedis } from './helpers/limiters.js';
import { accountIdOf } from './helpers/servers.js';
import { SHARED_BACKENDS, corruptIdempotencyEntry, idempotencyRows, rawIdempotencyEntry } from './helpers/shared-state.js';
import { createTestStore, storeKinds } from './helpers/stores.js';

const post = (t: TestApp, token: string, key: string | undefined, body: unknown) =>
  api(t, 'POST', '/api/v1/servers', { token, body, ...(key === undefined ? {} : { headers: { 'idempotency-key': key } }) });

async function serverCount(t: TestApp, name: string): Promise<number> {
  return (await t.store.db.selectFrom('servers').select('id').where('name', '=', name).execute()).length;
}

// Every case runs with the keys in the store (no REDIS_URL) and in Redis: the two must answer alike.
for (const backend of SHARED_BACKENDS) describeEachStore(`Idempotency-Key on POST /servers (keys in ${backend.name})`, (t) => {
  test('a retry with the same key and body replays the first response, marked Idempotency-Replayed', async () => {
    const u = await registerUser(t);
    const first = await post(t, u.token, 'retry-1', { name: 'idem-replay', tags: ['a'] });
    assert.equal(first.status, 201);
    assert.equal(first.headers['idempotency-replayed'], undefined);
    t.clock.advance(IDEMPOTENCY_TTL_MS - 1000);
    const again = await post(t, u.token, 'retry-1', { tags: ['a'], name: 'idem-replay' });
    assert.equal(again.status, 201);
    assert.equal(again.headers['idempotency-replayed'], 'true');
    assert.match(String(again.headers['content-type']), /^application\/json/);
    assert.deepEqual(again.body, first.body, 'same server id and the same collector key');
    assert.equal(await serverCount(t, 'idem-replay'), 1);
  });

  test('without the header every request is new', async () => {
    const u = await registerUser(t);
    assert.equal((await post(t, u.token, undefined, { name: 'idem-none' })).status, 201);
    assert.equal((await post(t, u.token, undefined, { name: 'idem-none' })).status, 201);
    assert.equal(await serverCount(t, 'idem-none'), 2);
  });

  test('the same key with another body is 422 idempotency_key_reused', async () => {
    const u = await registerUser(t);
    assert.equal((await post(t, u.token, 'reuse', { name: 'idem-a' })).status, 201);
    const res = await post(t, u.token, 'reuse', { name: 'idem-b' });
    expectEnvelope(res, 422, 'idempotency_key_reused');
    assert.equal(res.body.retryable, false);
    assert.equal(await serverCount(t, 'idem-b'), 0);
  });

  test('keys are scoped per account', async () => {
    const a = await registerUser(t);
    const b = await registerUser(t);
    const first = await post(t, a.token, 'shared-key', { name: 'idem-scope' });
    const second = await post(t, b.token, 'shared-key', { name: 'idem-scope' });
    assert.equal(second.status, 201);
    assert.equal(second.headers['idempotency-replayed'], undefined);
    assert.notEqual(second.body.server.id, first.body.server.id);
  });

  test('after 24 hours the key is free again', async () => {
    const u = await registerUser(t);
    const first = await post(t, u.token, 'daily', { name: 'idem-day-1' });
    t.clock.advance(IDEMPOTENCY_TTL_MS);
    const sameBody = await post(t, u.token, 'daily', { name: 'idem-day-1' });
    assert.equal(sameBody.status, 201);
    assert.equal(sameBody.headers['idempotency-replayed'], undefined);
    assert.notEqual(sameBody.body.server.id, first.body.server.id);
    t.clock.advance(IDEMPOTENCY_TTL_MS);
    const otherBody = await post(t, u.token, 'daily', { name: 'idem-day-2' });
    assert.equal(otherBody.status, 201, 'an expired key may carry a new body');
  });

  test('a deterministic 400 is cached and replayed with the replaying request\'s request_id', async () => {
    const u = await registerUser(t);
    const first = await post(t, u.token, 'bad-body', { name: 'x', tags: 'not-a-list' });
    expectEnvelope(first, 400, 'validation_failed');
    const again = await post(t, u.token, 'bad-body', { name: 'x', tags: 'not-a-list' });
    const envelope = expectEnvelope(again, 400, 'validation_failed');
    assert.equal(again.headers['idempotency-replayed'], 'true');
    assert.notEqual(envelope.request_id, first.body.request_id);
    assert.deepEqual({ ...envelope, request_id: null }, { ...first.body, request_id: null });
    const profile = await post(t, u.token, 'bad-profile', { profile: 'nope' });
    expectEnvelope(profile, 400, 'validation_failed');
    assert.equal((await post(t, u.token, 'bad-profile', { profile: 'nope' })).headers['idempotency-replayed'], 'true');
  });

  test('a request whose first attempt is still in flight gets 409 idempotency_in_flight until its lock runs out', async () => {
    const u = await registerUser(t);
    const accountId = await accountIdOf(t, u);
    const body = { name: 'idem-inflight' };
    const now = t.clock.now();
    // A first attempt that claimed the key and never answered (its process died), in whichever backend holds keys.
    assert.deepEqual(await t.shared.idempotency.claim({
      account_id: accountId, idem_key: 'busy', request_hash: requestHash('POST', '/api/v1/servers', body), state: 'in_flight',
      status_code: null, response_body: null, created_at: now.toISOString(),
      locked_until: new Date(now.getTime() + IDEMPOTENCY_LOCK_MS).toISOString(),
      expires_at: new Date(now.getTime() + IDEMPOTENCY_TTL_MS).toISOString(),
    }), { kind: 'claimed' });
    const res = await post(t, u.token, 'busy', body);
    const envelope = expectEnvelope(res, 409, 'idempotency_in_flight');
    assert.equal(envelope.retryable, true);
    expectEnvelope(await post(t, u.token, 'busy', { name: 'other' }), 422, 'idempotency_key_reused');
    assert.equal(await serverCount(t, 'idem-inflight'), 0);

    // The first request died without answering: once its lock is over, a retry runs.
    t.clock.advance(IDEMPOTENCY_LOCK_MS);
    const retry = await post(t, u.token, 'busy', body);
    assert.equal(retry.status, 201);
    assert.equal((await post(t, u.token, 'busy', body)).body.server.id, retry.body.server.id);
  });

  test('two concurrent requests with one key create one server', async () => {
    const u = await registerUser(t);
    for (let round = 0; round < 5; round++) {
      const name = `idem-race-${round}`;
      const results = await Promise.all([post(t, u.token, `race-${round}`, { name }), post(t, u.token, `race-${round}`, { name })]);
      const fresh = results.filter((r) => r.status === 201 && r.headers['idempotency-replayed'] === undefined);
      assert.equal(fresh.length, 1, `round ${round}: ${results.map((r) => r.status).join(', ')}`);
      const other = results.find((r) => r !== fresh[0])!;
      if (other.status === 409) expectEnvelope(other, 409, 'idempotency_in_flight');
      else {
        assert.equal(other.headers['idempotency-replayed'], 'true');
        assert.equal(other.body.server.id, fresh[0]!.body.server.id);
      }
      assert.equal(await serverCount(t, name), 1);
    }
  });

  test(`the stored response is encrypted: the collector key is not readable in ${backend.name === 'redis' ? 'Redis' : 'the store'}`, async () => {
    const u = await registerUser(t);
    const res = await post(t, u.token, 'sealed', { name: 'idem-sealed' });
    const entry = await rawIdempotencyEntry(t, await accountIdOf(t, u), 'sealed');
    assert.equal(entry?.state, 'done');
    assert.equal(entry.status_code, 201);
    assert.ok(!entry.response_body!.includes(res.body.server.api_key));
    assert.ok(!entry.response_body!.includes(res.body.server.id));
    if (t.redis) assert.equal(await idempotencyRows(t.store), 0, 'with Redis, the table holds no keys');
  });

  test('the key must be 1-255 printable ASCII characters', async () => {
    const u = await registerUser(t);
    assert.equal((await post(t, u.token, 'k'.repeat(255), { name: 'idem-long' })).status, 201);
    assert.equal((await post(t, u.token, ' !~{}"key with spaces"', { name: 'idem-ascii' })).status, 201);
    for (const key of ['', 'k'.repeat(256), 'tab\there', 'caf\u00e9']) {
      const res = await post(t, u.token, key, { name: 'idem-bad-key' });
      const envelope = expectEnvelope(res, 400, 'validation_failed');
      assert.equal(envelope.details[0].field, 'Idempotency-Key', JSON.stringify(key).slice(0, 20));
    }
    assert.equal(await serverCount(t, 'idem-bad-key'), 0);
  });

  test('authentication and scope come first and are not cached', async () => {
    const u = await registerUser(t);
    const reader = await createKey(t, u.token, ['read']);
    expectEnvelope(await post(t, reader.secret, 'scoped', { name: 'idem-scope-first' }), 403, 'insufficient_scope');
    expectEnvelope(await post(t, 'bogus-token', 'scoped', { name: 'idem-scope-first' }), 401, 'invalid_token');
    const res = await post(t, u.token, 'scoped', { name: 'idem-scope-first' });
    assert.equal(res.status, 201);
    assert.equal(res.headers['idempotency-replayed'], undefined);
  });

  test('routes that are not idempotent ignore the header', async () => {
    const u = await registerUser(t);
    const server = (await post(t, u.token, undefined, { name: 'idem-patch' })).body.server;
    const patch = () => api(t, 'PATCH', `/api/v1/servers/${server.id}`, { token: u.token, body: { name: 'p' }, headers: { 'idempotency-key': 'patch-key' } });
    assert.equal((await patch()).headers['idempotency-replayed'], undefined);
    assert.equal((await patch()).headers['idempotency-replayed'], undefined);
    assert.equal(await rawIdempotencyEntry(t, await accountIdOf(t, u), 'patch-key'), undefined);
  });
}, { redis: backend.redis });

/** The mechanism on its own: routes that fail on purpose show what frees a key. */
for (const kind of storeKinds()) for (const backend of SHARED_BACKENDS) {
  describe(`Idempotency-Key release and misuse (keys in ${backend.name}) [${kind}]`, { skip: backend.skip }, () => {
    let store: Store;
    let redis: TestRedis | null = null;
    let dispose: () => Promise<void>;
    let app: FastifyInstance;
    const clock = new FakeClock();
    const calls: Record<string, number> = {};
    const principal: Principal = {
      accountId: 'acc_test', userId: 'usr_test', kind: 'account_key', credentialId: 'key_test',
      scopes: new Set(['read', 'write']), capabilities: new Set(),
    };

    before(async () => {
      ({ store, dispose } = await createTestStore(kind));
      app = Fastify();
      registerErrorHandling(app, null);
      registerAuth(app, { authenticate: async (token) => (token === 'good' ? principal : null) });
      redis = backend.redis ? new TestRedis() : null;
      const keys = redis ? redisSharedState({ redis: redis.redis, prefix: redis.prefix, db: store.db }).idempotency : undefined;
      registerIdempotency(app, { db: store.db, clock, secretKey: 'idempotency-test-secret-key-0123456789', store: keys });
      const counted = (name: string) => () => {
        calls[name] = (calls[name] ?? 0) + 1;
        return calls[name]!;
      };
      const crash = counted('crash');
      const unavailable = counted('unavailable');
      const limited = counted('limited');
      const ok = counted('ok');
      app.post('/crash', { config: { idempotent: true } }, async () => {
        if (crash() === 1) throw new Error('boom');
        return { attempt: calls.crash };
      });
      app.post('/unavailable', { config: { idempotent: true } }, async () => {
        if (unavailable() === 1) throw new ApiError('unavailable', 'store down');
        return { attempt: calls.unavailable };
      });
      app.post('/limited', { config: { idempotent: true } }, async () => {
        if (limited() === 1) throw new ApiError('rate_limited', 'slow down', [], 1);
        return { attempt: calls.limited };
      });
      app.post('/ok', { config: { idempotent: true } }, async () => ({ attempt: ok() }));
      app.post('/other', { config: { idempotent: true } }, async () => ({ other: true }));
      await app.ready();
    });

    after(async () => {
      await app.close();
      await redis?.dispose();
      await dispose();
    });

    const send = (url: string, key: string, body: unknown = { a: 1 }) =>
      app.inject({ method: 'POST', url, headers: { authorization: 'Bearer good', 'idempotency-key': key }, payload: body as object });

    test('a 500 frees the key so the retry runs', async () => {
      assert.equal((await send('/crash', 'k-crash')).statusCode, 500);
      const retry = await send('/crash', 'k-crash');
      assert.equal(retry.statusCode, 200);
      assert.deepEqual(retry.json(), { attempt: 2 });
      assert.equal((await send('/crash', 'k-crash')).headers['idempotency-replayed'], 'true');
    });

    test('a 503 and a 429 free the key too', async () => {
      assert.equal((await send('/unavailable', 'k-503')).statusCode, 503);
      assert.deepEqual((await send('/unavailable', 'k-503')).json(), { attempt: 2 });
      assert.equal((await send('/limited', 'k-429')).statusCode, 429);
      assert.deepEqual((await send('/limited', 'k-429')).json(), { attempt: 2 });
    });

    test('the same key on another path is reused, not replayed', async () => {
      assert.equal((await send('/ok', 'k-path')).statusCode, 200);
      assert.equal((await send('/other', 'k-path')).statusCode, 422);
    });

    test('the body is compared whatever its key order', async () => {
      const first = await send('/ok', 'k-order', { a: 1, b: { c: 2, d: 3 } });
      const second = await send('/ok', 'k-order', { b: { d: 3, c: 2 }, a: 1 });
      assert.equal(second.headers['idempotency-replayed'], 'true');
      assert.deepEqual(second.json(), first.json());
    });

    test('a row sealed under another secret is discarded instead of replayed', async () => {
      assert.equal((await send('/ok', 'k-resealed')).statusCode, 200);
      await corruptIdempotencyEntry({ store, redis }, principal.accountId, 'k-resealed');
      const res = await send('/ok', 'k-resealed');
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['idempotency-replayed'], undefined);
    });
  });
}
