import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { isStoreUnavailable } from '../../src/store/errors.js';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { buildApp } from '../../src/app.js';
import { logMailer } from '../../src/lib/mailer.js';
import { api, testConfig } from '../helpers/app.js';
import { FakeClock } from '../helpers/clock.js';
import { createTestStore, type TestStore } from '../helpers/stores.js';
import { expectUnavailable, warnings } from '../helpers/faults.js';

const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('which store errors are 503 unavailable', () => {
  test('connection loss, refusal, timeouts, shutdown and SQLite locks are; everything else is not', () => {
    const unavailable = [
      coded('SQLITE_BUSY', 'database is locked'), coded('SQLITE_BUSY_SNAPSHOT'), coded('SQLITE_BUSY_RECOVERY'), coded('SQLITE_LOCKED'),
      coded('57P01', 'terminating connection due to administrator command'), coded('57P02'), coded('57P03', 'the database system is starting up'),
      coded('53300', 'sorry, too many clients already'), coded('08006'), coded('08001'), coded('08P01'),
      coded('ECONNREFUSED'), coded('ECONNRESET'), coded('EPIPE'), coded('ETIMEDOUT'), coded('EHOSTUNREACH'), coded('EAI_AGAIN'),
      new Error('Connection terminated unexpectedly'),
      new Error('Connection terminated due to connection timeout'),
      new Error('timeout exceeded when trying to connect'),
      new Error('Client has encountered a connection error and is not queryable'),
      new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')], 'connect ECONNREFUSED'),
    ];
    for (const error of unavailable) assert.equal(isStoreUnavailable(error), true, `${(error as any).code ?? ''} ${error.message}`);

    const others = [
      // A failing or full disk needs an operator: 500, logged as an error.
      coded('SQLITE_IOERR'), coded('SQLITE_IOERR_WRITE'), coded('SQLITE_FULL'), coded('SQLITE_CORRUPT'), coded('SQLITE_CONSTRAINT_UNIQUE'),
      coded('23505'), coded('40001'), coded('40P01'), coded('42P01'), coded('0800'),
      new Error('Connection terminated'), new Error('boom'), new TypeError('The database connection is not open'),
      // An outbound request that fails names its cause only below: not the store.
      new TypeError('fetch failed', { cause: coded('ECONNREFUSED') }),
      new AggregateError([coded('ECONNREFUSED'), new Error('other')]), new AggregateError([]),
      null, undefined, 'ECONNREFUSED', { code: 57 },
    ];
    for (const error of others) assert.equal(isStoreUnavailable(error), false, String((error as any)?.code ?? error));
  });

  test('SQLITE_BUSY_TIMEOUT_MS: 5000 by default, 0-60000 milliseconds', () => {
    const load = (value?: string) => loadConfig({ SECRET_KEY: 'x'.repeat(40), DATA_DIR: '/nonexistent-kiln-test', ...(value === undefined ? {} : { SQLITE_BUSY_TIMEOUT_MS: value }) });
    assert.equal(load().sqliteBusyTimeoutMs, 5000);
    assert.equal(load('50').sqliteBusyTimeoutMs, 50);
    assert.equal(load('0').sqliteBusyTimeoutMs, 0);
    assert.equal(load('60000').sqliteBusyTimeoutMs, 60000);
    for (const bad of ['-1', '1.5', '60001', 'soon', '1e3']) assert.throws(() => load(bad), ConfigError, bad);
  });
});

describe('the error handler and a store outage [sqlite]', () => {
  const logs: string[] = [];
  let testStore: TestStore;
  let app: FastifyInstance;
  before(async () => {
    testStore = await createTestStore('sqlite');
    const logger = pino({ level: 'info' }, new Writable({ write(chunk, _e, done) { logs.push(String(chunk)); done(); } }));
    app = await buildApp({ config: testConfig(), store: testStore.store, clock: new FakeClock(), mailer: logMailer(logger), logger, fetch: globalThis.fetch });
    app.get('/api/v1/test-store-gone', { config: { auth: 'public' } }, async () => {
      throw coded('08006', 'connection failure during select password_hash from users');
    });
    app.get('/api/v1/test-disk-failed', { config: { auth: 'public' } }, async () => {
      throw coded('SQLITE_IOERR', 'disk I/O error');
    });
  });
  after(async () => {
    await app.close();
    await testStore.dispose();
  });
  const t = { get app() { return app; }, get logs() { return logs; } };

  test('an unavailable store is 503 with Retry-After, the cause logged at warn and kept from the client', async () => {
    const res = await api(t, 'GET', '/api/v1/test-store-gone');
    expectUnavailable(res);
    assert.equal(res.raw.includes('password_hash'), false);
    const logged = warnings(t.logs, 'store unavailable; answered 503');
    assert.equal(logged.length, 1);
    assert.ok(logged[0]!.includes('password_hash') && logged[0]!.includes(res.body.request_id), 'the log has the cause and the request id');
  });

  test('a failed disk stays 500 internal_error, logged as an error', async () => {
    const res = await api(t, 'GET', '/api/v1/test-disk-failed');
    assert.equal(res.status, 500);
    assert.equal(res.body.error, 'internal_error');
    assert.equal(res.headers['retry-after'], undefined);
    assert.ok(t.logs.some((line) => line.includes('"level":50') && line.includes('disk I/O error')));
  });
});
