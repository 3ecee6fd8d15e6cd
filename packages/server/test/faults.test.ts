import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { Writable } from 'node:stream';
import { buildApp } from '../src/app.js';
import { logMailer } from '../src/lib/mailer.js';
import { api, expectEnvelope, startApp, testConfig } from './helpers/app.js';
import { FakeClock } from './helpers/clock.js';
import { createTestStore, storeKinds, type TestStore } from './helpers/stores.js';

for (const kind of storeKinds()) {
  describe(`faults [${kind}]`, () => {
    let testStore: TestStore;
    const logs: string[] = [];
    before(async () => {
      testStore = await createTestStore(kind);
    });
    after(async () => testStore.dispose());

    test('an unexpected error is 500 internal_error without its message, stack or SQL, and is logged', async () => {
      const logger = pino({ level: 'info' }, new Writable({ write(c, _e, done) { logs.push(String(c)); done(); } }));
      const app = await buildApp({
        config: testConfig(), store: testStore.store, clock: new FakeClock(), mailer: logMailer(logger), logger, fetch: globalThis.fetch,
      });
      app.get('/api/v1/test-boom', { config: { auth: 'public' } }, async () => {
        throw new Error('select password_hash from users where id = 42');
      });
      const res = await api({ app }, 'GET', '/api/v1/test-boom');
      const env = expectEnvelope(res, 500, 'internal_error');
      assert.equal(env.retryable, true);
      assert.equal(res.raw.includes('password_hash'), false);
      assert.equal(res.raw.includes('at '), false);
      assert.ok(logs.some((line) => line.includes('password_hash') && line.includes(env.request_id)), 'the fault is in the log with its request id');
      await app.close();
    });
  });

  describe(`readiness when the store is gone [${kind}]`, () => {
    test('/readyz is 503 unavailable (retryable) while /healthz stays up', async () => {
      const t = await startApp(kind);
      try {
        assert.equal((await api(t, 'GET', '/readyz')).status, 200);
        await t.store.close();
        const res = await api(t, 'GET', '/readyz');
        assert.equal(expectEnvelope(res, 503, 'unavailable').retryable, true);
        assert.equal((await api(t, 'GET', '/healthz')).status, 200);
      } finally {
        await t.close();
      }
    });
  });
}
