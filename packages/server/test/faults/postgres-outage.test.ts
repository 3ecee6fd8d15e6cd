import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { api, expectEnvelope, registerUser, startApp, type TestApp, type TestUser } from '../helpers/app.js';
import { WRITE_SUCCESS, expectUnavailable, terminateBackends, warnings, writeRequests } from '../helpers/faults.js';
import { createServer, type RegisteredServer } from '../helpers/servers.js';
import { changedTables, storeRowsAt } from '../helpers/store-rows.js';
import { storeKinds } from '../helpers/stores.js';
import { postgresTarget, startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

type Write = keyof typeof WRITE_SUCCESS;

/**
 * The real PostgreSQL behind a TCP proxy the test controls: cutting the
 * proxy is what the service sees of a restart (connections closed, then
 * connection refused), without restarting the server other tests share.
 */
describe('PostgreSQL goes away and comes back [postgres]', { skip: !storeKinds().includes('postgres') && 'TEST_DATABASE_URL is not set' }, () => {
  let proxy: TcpProxy;
  let t: TestApp;
  let owner: TestUser;
  let server: RegisteredServer;
  before(async () => {
    proxy = await startTcpProxy(postgresTarget());
    // A stalled connection gives up after 500 ms instead of the default 5 s.
    t = await startApp('postgres', { store: { via: (url) => proxy.via(url), connectTimeoutMs: 500 } });
    owner = await registerUser(t);
    server = await createServer(t, owner.token, { name: 'pg-host' });
  });
  after(async () => {
    await t?.close();
    await proxy?.close();
  });

  const state = () => storeRowsAt('postgres', t.location);
  /** Several requests at once, so the pool holds several connections when the fault comes. */
  const warmPool = () => Promise.all([1, 2, 3].map(() => api(t, 'GET', '/api/v1/servers', { token: owner.token })));

  test('while the proxy is cut: 503 unavailable for reads and writes, /healthz 200, /readyz 503, nothing written; back: the same requests succeed, no restart', async () => {
    await warmPool();
    const writes = writeRequests(t, owner, server);
    const before = await state();
    await proxy.cut();
    try {
      for (const [name, send] of Object.entries(writes)) expectUnavailable(await send(), name);
      expectUnavailable(await api(t, 'GET', '/api/v1/servers', { token: owner.token }), 'a read (authentication needs the store)');
      expectUnavailable(await api(t, 'GET', '/readyz'), '/readyz');
      assert.equal((await api(t, 'GET', '/healthz')).status, 200, 'the process is up');
      expectEnvelope(await api(t, 'POST', '/api/v1/auth/register', { body: { email: 'not-an-address', password: 'long enough password' } }), 400, 'validation_failed');
      assert.deepEqual(changedTables(before, await state()), [], 'nothing was written');
    } finally {
      await proxy.restore();
    }

    assert.equal((await api(t, 'GET', '/readyz')).status, 200);
    for (const [name, send] of Object.entries(writes)) {
      const res = await send();
      assert.equal(res.status, WRITE_SUCCESS[name as Write], `${name} after the outage: ${res.raw}`);
    }
    const list = await api(t, 'GET', '/api/v1/servers', { token: owner.token });
    assert.equal(list.status, 200);
    assert.equal(list.body.servers.length, 2, 'pg-host and the one registered after the outage');
    assert.ok(warnings(t.logs, 'store unavailable; answered 503').length >= 4, 'each 503 but /readyz\'s is logged at warn');
    assert.equal(t.logs.filter((line) => line.includes('unhandled error')).length, 0, 'no 500');
  });

  /**
   * The proxy closes everything when the request sends its transaction's
   * last statement: what ran before it (in the ingest case the server
   * claim, the alerts and outbox rows, the latest snapshot) must be rolled
   * back with it.
   */
  const lastStatements: Array<[Write, string]> = [
    ['register', 'insert into "sessions"'],
    ['createServer', 'insert into "server_tags"'],
    ['ingest', 'insert into "metric_samples"'],
  ];
  for (const [name, sql] of lastStatements) {
    test(`${name} cut by the outage at its last statement leaves nothing half-written, and its retry succeeds`, async () => {
      // A server of its own: its first push raises new alerts inside the transaction that is cut.
      const fresh = await createServer(t, owner.token, { name: `pg-${name}` });
      const send = writeRequests(t, owner, fresh)[name];
      const before = await state();
      const cutting = proxy.cutWhen(sql);
      const res = await send();
      await cutting;
      expectUnavailable(res, name);
      assert.deepEqual(changedTables(before, await state()), [], `${name}: no row of the interrupted transaction`);

      await proxy.restore();
      const again = await send();
      // For ingest: had the claim committed, the 55-second gate would answer 429 here.
      assert.equal(again.status, WRITE_SUCCESS[name], `${name} retried: ${again.raw}`);
      if (name === 'ingest') assert.ok(again.body.new_alerts > 0, 'the retried push raised the alerts the cut one had written');
      assert.notDeepEqual(changedTables(before, await state()), []);
    });
  }

  test('pg_terminate_backend of idle connections (a restart seen by the pool): the pool replaces them, requests go on without a 503', async () => {
    await warmPool();
    assert.ok(proxy.open >= 1);
    assert.ok(await terminateBackends(t.location) >= 1);
    await proxy.drained(); // every connection the service had is closed at both ends
    const logged = t.logs.length;
    assert.equal((await api(t, 'GET', '/api/v1/servers', { token: owner.token })).status, 200);
    assert.equal((await writeRequests(t, owner, server).createServer()).status, 201);
    assert.equal((await api(t, 'GET', '/readyz')).status, 200);
    assert.equal(warnings(t.logs.slice(logged), 'answered 503').length, 0);
  });

  test('pg_terminate_backend of a connection in the middle of an ingest transaction: 503, nothing half-written, the retry succeeds', async () => {
    const fresh = await createServer(t, owner.token, { name: 'pg-terminated' });
    const send = writeRequests(t, owner, fresh).ingest;
    const before = await state();
    const holding = proxy.holdWhen('insert into "metric_samples"');
    const pending = send();
    await holding; // the transaction is open with the claim, alerts and latest snapshot written
    assert.ok(await terminateBackends(t.location) >= 1);
    expectUnavailable(await pending, 'ingest whose backend was terminated');
    assert.deepEqual(changedTables(before, await state()), []);
    const again = await send();
    assert.equal(again.status, 200, again.raw);
    assert.ok(again.body.new_alerts > 0);
  });

  test('a PostgreSQL that accepts connections but never answers: 503 after the connect timeout; it answers again: requests succeed', async () => {
    await proxy.cut();
    await proxy.restore('stall');
    try {
      expectUnavailable(await api(t, 'GET', '/api/v1/servers', { token: owner.token }), 'connect timeout');
      expectUnavailable(await api(t, 'GET', '/readyz'), '/readyz');
      assert.ok(warnings(t.logs, 'Connection terminated due to connection timeout').length >= 1, 'the cause is in the log');
    } finally {
      await proxy.cut();
      await proxy.restore();
    }
    assert.equal((await api(t, 'GET', '/api/v1/servers', { token: owner.token })).status, 200);
  });
});
