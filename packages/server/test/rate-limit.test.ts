import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { buildApp } from '../src/app.js';
import { logMailer } from '../src/lib/mailer.js';
import {
  PASSWORD, api, createKey, expectEnvelope, registerUser, startApp, type ApiResponse, type TestApp,
} from './helpers/app.js';
import { BACKENDS, backendLimiters, type BackendLimiters } from './helpers/limiters.js';
import { createServer, purger } from './helpers/servers.js';
import { storeKinds } from './helpers/stores.js';

// The limiter does not depend on the store: one store kind is enough here.
const kind = storeKinds()[0]!;

/** Runs `count` requests, `width` at a time, and returns their statuses in order. */
async function burst(count: number, send: (i: number) => Promise<ApiResponse>, width = 50): Promise<number[]> {
  const statuses: number[] = [];
  for (let start = 0; start < count; start += width) {
    const batch = Array.from({ length: Math.min(width, count - start) }, (_, j) => send(start + j));
    statuses.push(...(await Promise.all(batch)).map((res) => res.status));
  }
  return statuses;
}

/** Asserts the 429 of a token bucket: envelope, retryable, and Retry-After equal to retry_after_seconds. */
function expectLimited(res: ApiResponse, seconds: number): void {
  const envelope = expectEnvelope(res, 429, 'rate_limited');
  assert.equal(envelope.retryable, true);
  assert.equal(envelope.retry_after_seconds, seconds);
  assert.equal(res.headers['retry-after'], String(seconds));
}

let nextIp = 0;
/** Addresses of TEST-NET-3, never used by api()'s own per-request addresses. */
const freshIp = () => `203.0.113.${++nextIp}`;

for (const backend of BACKENDS) {
  describe(`rate limits over HTTP [${backend.name}]`, { skip: backend.skip }, () => {
    let limiters: BackendLimiters;
    let t: TestApp;
    before(async () => {
      limiters = backendLimiters(backend.name);
      t = await startApp(kind, { limiter: limiters.make() });
    });
    after(async () => {
      await t.close();
      await limiters.dispose();
    });

    describe('per IP: 100, then 10 per second, on every request before authentication', () => {
      test('public, unauthenticated and unknown-path requests share the bucket; the 101st is 429 until a token is back', async () => {
        const ip = freshIp();
        const kinds = ['/api/v1/version', '/api/v1/no-such-path', '/api/v1/servers', '/healthz'];
        const statuses = await burst(100, (i) => api(t, 'GET', kinds[i % 4]!, { ip, token: i % 8 === 2 ? 'not-a-token' : undefined }));
        assert.deepEqual([...new Set(statuses)].sort(), [200, 401, 404]);
        expectLimited(await api(t, 'GET', '/api/v1/version', { ip }), 1);
        expectLimited(await api(t, 'GET', '/api/v1/no-such-path', { ip }), 1);
        assert.equal((await api(t, 'GET', '/api/v1/version', { ip: freshIp() })).status, 200, 'another address is unaffected');

        t.clock.advance(50);
        expectLimited(await api(t, 'GET', '/api/v1/version', { ip }), 1);
        t.clock.advance(950);
        const statusesAfter = await burst(11, () => api(t, 'GET', '/api/v1/version', { ip }), 1);
        assert.deepEqual(statusesAfter, [...Array(10).fill(200), 429], 'one second gives back 10 tokens');
      });

      test('a request refused by a later tier still costs its per-IP token', async () => {
        const ip = freshIp();
        const owner = await registerUser(t);
        const server = await createServer(t, owner.token);
        const rotate = () => api(t, 'POST', `/api/v1/servers/${server.id}/rotate-key`, { token: owner.token, ip });
        assert.deepEqual(await burst(10, rotate, 1), Array(10).fill(200));
        expectLimited(await rotate(), 360);
        // 11 of the address's 100 tokens are spent, the refused request's included.
        assert.deepEqual(await burst(89, () => api(t, 'GET', '/healthz', { ip })), Array(89).fill(200));
        expectLimited(await api(t, 'GET', '/healthz', { ip }), 1);
      });
    });

    describe('per key: 1000, then 100 per second, per collector key or account key', () => {
      test('an account key is refused on its 1001st request; another key of the account is not', async () => {
        const owner = await registerUser(t);
        const first = await createKey(t, owner.token, ['read']);
        const second = await createKey(t, owner.token, ['read']);
        const statuses = await burst(1000, () => api(t, 'GET', '/api/v1/account/keys', { token: first.secret }));
        assert.deepEqual([...new Set(statuses)], [200]);
        expectLimited(await api(t, 'GET', '/api/v1/account/keys', { token: first.secret }), 1);
        assert.equal((await api(t, 'GET', '/api/v1/account/keys', { token: second.secret })).status, 200);
        t.clock.advance(10);
        assert.equal((await api(t, 'GET', '/api/v1/account/keys', { token: first.secret })).status, 200, '10 ms gives back one token');
      });

      test('a collector key is refused on its 1001st request, before the key is looked up', async () => {
        const owner = await registerUser(t);
        const server = await createServer(t, owner.token);
        const check = () => api(t, 'GET', '/api/v1/ingest', { token: server.api_key });
        assert.deepEqual([...new Set(await burst(1000, check))], [200]);
        expectLimited(await check(), 1);
        const unknown = `col_${'ab'.repeat(20)}`;
        assert.equal((await api(t, 'GET', '/api/v1/ingest', { token: unknown })).status, 401, 'another key has its own bucket');
      });

      test('a session token is a credential of its own: it has a per-key bucket too', async () => {
        const owner = await registerUser(t);
        const login = await api(t, 'POST', '/api/v1/auth/login', { body: { email: owner.email, password: PASSWORD } });
        const statuses = await burst(1000, () => api(t, 'GET', '/api/v1/account/keys', { token: owner.token }));
        assert.deepEqual([...new Set(statuses)], [200]);
        expectLimited(await api(t, 'GET', '/api/v1/account/keys', { token: owner.token }), 1);
        assert.equal((await api(t, 'GET', '/api/v1/account/keys', { token: login.body.token })).status, 200, 'the other session is unaffected');
      });
    });

    describe('per account: 5000, then 500 per second, over all its credentials', () => {
      test('five keys of 1000 spend the account; its sixth key is refused, another account is not', async () => {
        const owner = await registerUser(t);
        const keys = await Promise.all(Array.from({ length: 6 }, () => createKey(t, owner.token, ['read'])));
        // The key creations above were requests of the account too (a session's): 6 tokens.
        const statuses = await burst(4994, (i) => api(t, 'GET', '/api/v1/account/keys', { token: keys[i % 5]!.secret }), 100);
        assert.deepEqual([...new Set(statuses)], [200]);
        expectLimited(await api(t, 'GET', '/api/v1/account/keys', { token: keys[5]!.secret }), 1);
        expectLimited(await api(t, 'GET', '/api/v1/auth/me', { token: owner.token }), 1);
        const other = await registerUser(t);
        assert.equal((await api(t, 'GET', '/api/v1/auth/me', { token: other.token })).status, 200);
        t.clock.advance(2);
        assert.equal((await api(t, 'GET', '/api/v1/account/keys', { token: keys[5]!.secret })).status, 200, '2 ms gives back one token');
      });
    });

    describe('sub-limits per account, after authentication', () => {
      test('POST /servers: 100, then one per 36 seconds', async () => {
        const owner = await registerUser(t);
        const register = () => api(t, 'POST', '/api/v1/servers', { token: owner.token, body: {} });
        assert.deepEqual([...new Set(await burst(100, register, 10))], [201]);
        const refused = await register();
        expectLimited(refused, 36);
        const other = await registerUser(t);
        assert.equal((await api(t, 'POST', '/api/v1/servers', { token: other.token, body: {} })).status, 201, 'per account');
        t.clock.advance(refused.body.retry_after_seconds * 1000);
        assert.equal((await register()).status, 201);
        expectLimited(await register(), 36);
      });

      test('DELETE /servers/:id: 100 attempts, then one per 36 seconds', async () => {
        const owner = await registerUser(t);
        const server = await createServer(t, owner.token);
        const trash = (id: string) => api(t, 'DELETE', `/api/v1/servers/${id}?confirm=true`, { token: owner.token });
        // Attempts count, found or not: the sub-limit is checked before the handler runs.
        assert.deepEqual([...new Set(await burst(100, (i) => trash(`srv_missing${i}`)))], [404]);
        expectLimited(await trash(server.id), 36);
        t.clock.advance(36_000);
        assert.equal((await trash(server.id)).status, 200);
      });

      test('POST /servers/:id/rotate-key: 10, then one per 6 minutes', async () => {
        const owner = await registerUser(t);
        const server = await createServer(t, owner.token);
        const rotate = () => api(t, 'POST', `/api/v1/servers/${server.id}/rotate-key`, { token: owner.token });
        assert.deepEqual(await burst(10, rotate, 1), Array(10).fill(200));
        expectLimited(await rotate(), 360);
        t.clock.advance(359_000);
        expectLimited(await rotate(), 1);
        t.clock.advance(1_000);
        assert.equal((await rotate()).status, 200);
      });

      test('DELETE /trashed-servers/:id (purge): 100, then one per 36 seconds', async () => {
        const { key } = await purger(t);
        const purge = (id: string) => api(t, 'DELETE', `/api/v1/trashed-servers/${id}?confirm=true`, { token: key });
        assert.deepEqual([...new Set(await burst(100, (i) => purge(`srv_missing${i}`)))], [404]);
        expectLimited(await purge('srv_missing'), 36);
        const other = await purger(t);
        assert.equal((await api(t, 'DELETE', '/api/v1/trashed-servers/srv_missing?confirm=true', { token: other.key })).status, 404);
        t.clock.advance(36_000);
        assert.equal((await purge('srv_missing')).status, 404, 'a token is back after 36 seconds');
      });
    });

    if (backend.name === 'redis') {
      test('two app instances on one Redis share every bucket', async () => {
        // A second service on the same store and the same Redis, as a second process would be.
        const logger = pino({ level: 'silent' });
        const second = await buildApp({
          config: t.config, store: t.store, clock: t.clock, mailer: logMailer(logger), logger, fetch: globalThis.fetch, limiter: limiters.make(),
        });
        await second.ready();
        try {
          const ip = freshIp();
          const statuses = await burst(100, (i) => api(i % 2 ? t : { app: second }, 'GET', '/healthz', { ip }));
          assert.deepEqual([...new Set(statuses)], [200]);
          expectLimited(await api({ app: second }, 'GET', '/healthz', { ip }), 1);
          expectLimited(await api(t, 'GET', '/healthz', { ip }), 1);

          const owner = await registerUser(t);
          const server = await createServer(t, owner.token);
          const rotate = (app: { app: typeof second }) => api(app, 'POST', `/api/v1/servers/${server.id}/rotate-key`, { token: owner.token });
          for (let i = 0; i < 10; i++) assert.equal((await rotate(i % 2 ? t : { app: second })).status, 200);
          expectLimited(await rotate(t), 360);
          expectLimited(await rotate({ app: second }), 360);
        } finally {
          await second.close();
        }
      });
    }
  });
}
