import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { groupCommit } from '../../src/store/group-commit.js';
import { isStoreUnavailable } from '../../src/store/errors.js';
import { PASSWORD, api, expectEnvelope, registerUser, startApp, type TestApp } from '../helpers/app.js';
import { WRITE_SUCCESS, expectUnavailable, warnings, writeRequests } from '../helpers/faults.js';
import { createServer } from '../helpers/servers.js';
import { changedTables, storeRowsAt } from '../helpers/store-rows.js';

/**
 * Another program (a backup, the sqlite3 shell, a second process) holds the
 * SQLite write lock: a real second connection to the same file in BEGIN
 * IMMEDIATE. The service waits its busy timeout (50 ms here), then answers
 * 503; WAL lets reads go on meanwhile.
 */
describe('SQLite locked by another connection [sqlite]', () => {
  let t: TestApp;
  let locker: SQLite.Database;
  before(async () => {
    t = await startApp('sqlite', { store: { sqliteBusyTimeoutMs: 50 } });
    locker = new SQLite(join(t.location, 'kiln.sqlite'));
  });
  after(async () => {
    if (locker.inTransaction) locker.exec('ROLLBACK');
    locker.close();
    await t.close();
  });

  /** Runs `body` while the other connection holds the write lock, and releases it whatever happens. */
  async function whileLocked<T>(body: () => Promise<T>): Promise<T> {
    locker.exec('BEGIN IMMEDIATE');
    try {
      return await body();
    } finally {
      locker.exec('ROLLBACK');
    }
  }

  test('writes are 503 unavailable (retryable, Retry-After), reads work, nothing is written; released, the same requests succeed', async () => {
    const owner = await registerUser(t);
    const server = await createServer(t, owner.token, { name: 'locked-host' });
    const writes = writeRequests(t, owner, server);
    const login = () => api(t, 'POST', '/api/v1/auth/login', { body: { email: owner.email, password: PASSWORD } });
    const idempotent = () => api(t, 'POST', '/api/v1/servers', { token: owner.token, body: { name: 'keyed' }, headers: { 'idempotency-key': 'busy-1' } });
    const before = await storeRowsAt('sqlite', t.location);

    await whileLocked(async () => {
      for (const [name, send] of Object.entries(writes)) expectUnavailable(await send(), name);
      expectUnavailable(await login(), 'login (stores a session)');
      expectUnavailable(await idempotent(), 'POST /servers with Idempotency-Key (the key cannot be claimed)');
      // What a client gets wrong is still its 4xx: the body is checked before anything is written.
      expectEnvelope(await api(t, 'POST', '/api/v1/servers', { token: owner.token, body: { name: 7 } }), 400, 'validation_failed');
      expectEnvelope(await api(t, 'POST', '/api/v1/auth/register', { body: { email: 'not-an-address', password: PASSWORD } }), 400, 'validation_failed');

      const list = await api(t, 'GET', '/api/v1/servers', { token: owner.token });
      assert.equal(list.status, 200, list.raw);
      assert.deepEqual(list.body.servers.map((s: any) => s.id), [server.id]);
      assert.equal((await api(t, 'GET', `/api/v1/servers/${server.id}`, { token: owner.token })).status, 200);
      assert.equal((await api(t, 'GET', '/readyz')).status, 200, 'the store answers reads: ready');
      assert.equal((await api(t, 'GET', '/healthz')).status, 200);
      assert.deepEqual(changedTables(before, await storeRowsAt('sqlite', t.location)), [], 'nothing was written');
    });

    assert.ok(warnings(t.logs, 'store unavailable; answered 503').length >= 5, 'each 503 is logged at warn');
    assert.ok(warnings(t.logs, 'SQLITE_BUSY').length >= 1, 'with the store error that caused it');
    assert.equal(t.logs.filter((line) => line.includes('unhandled error')).length, 0, 'no 500 and no error-level log');

    for (const [name, send] of Object.entries(writes)) {
      const res = await send();
      assert.equal(res.status, WRITE_SUCCESS[name as keyof typeof WRITE_SUCCESS], `${name} after the lock: ${res.raw}`);
      if (name === 'ingest') assert.ok(res.body.new_alerts > 0, 'the push raised its alerts');
    }
    assert.equal((await login()).status, 200);
    assert.equal((await idempotent()).status, 201, 'the key was never claimed, so it is free');
    const changed = changedTables(before, await storeRowsAt('sqlite', t.location)).join('\n');
    for (const table of ['accounts', 'users', 'sessions', 'servers', 'server_tags', 'latest_snapshots', 'metric_samples', 'alerts']) {
      assert.match(changed, new RegExp(`^${table}:`, 'm'), `${table} written after the lock`);
    }
  });

  test('a transaction SQLite has already rolled back fails with its own error, not with the ROLLBACK that finds nothing to undo', async () => {
    const failed = await t.store.db.transaction().execute(async (tx) => {
      await tx.insertInto('accounts').values({ id: 'acc_rolled_back', created_at: '2026-11-22T12:00:00.000Z' }).execute();
      await sql`rollback`.execute(tx); // as SQLite itself may do on SQLITE_BUSY, SQLITE_FULL or SQLITE_IOERR
      throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
    }).catch((err: unknown) => err as { code?: string });
    assert.equal(failed.code, 'SQLITE_BUSY');
    assert.equal(await t.store.db.selectFrom('accounts').select('id').where('id', '=', 'acc_rolled_back').executeTakeFirst(), undefined);
  });

  test('pushes that share one group commit fail together after one busy wait, and all go through once the lock is released', async () => {
    const group = groupCommit(t.store.db);
    const attempts = [0, 0, 0];
    const unit = (i: number) => group.run(async (tx) => {
      attempts[i] = attempts[i]! + 1;
      await tx.insertInto('accounts').values({ id: `acc_group_${i}`, created_at: '2026-11-22T12:00:00.000Z' }).execute();
      return i;
    });

    const outcomes = await whileLocked(() => Promise.allSettled([0, 1, 2].map(unit)));
    for (const outcome of outcomes) {
      assert.equal(outcome.status, 'rejected');
      assert.ok(isStoreUnavailable((outcome as PromiseRejectedResult).reason), String((outcome as PromiseRejectedResult).reason));
    }
    // The first write met the lock; the others were not re-run alone, which would each wait the busy timeout again.
    assert.deepEqual(attempts, [1, 0, 0]);

    assert.deepEqual(await Promise.all([0, 1, 2].map(unit)), [0, 1, 2]);
    const ids = await t.store.db.selectFrom('accounts').select('id').where('id', 'like', 'acc_group_%').orderBy('id').execute();
    assert.deepEqual(ids.map((r) => r.id), ['acc_group_0', 'acc_group_1', 'acc_group_2']);
  });
});
