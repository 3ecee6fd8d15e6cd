import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PASSWORD, api, createKey, describeEachStore, expectEnvelope, registerUser, type TestApp, type TestUser } from './helpers/app.js';

/** Another account's resource must answer exactly like one that does not exist. */
async function sameAsMissing(t: TestApp, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: (id: string) => string, token: string, foreignId: string, body?: unknown) {
  const missingId = foreignId.replace(/_.*/, '_doesNotExist0000000000');
  const foreign = await api(t, method, path(foreignId), { token, body });
  const missing = await api(t, method, path(missingId), { token, body });
  expectEnvelope(foreign, 404, 'not_found');
  expectEnvelope(missing, 404, 'not_found');
  assert.equal(foreign.body.message, missing.body.message, `${method} ${path('…')} reveals existence`);
}

async function server(t: TestApp, owner: TestUser, body: Record<string, unknown>) {
  const res = await api(t, 'POST', '/api/v1/servers', { token: owner.token, body });
  assert.equal(res.status, 201, res.raw);
  return res.body.server as { id: string; api_key: string };
}

describeEachStore('tenancy: account A never reaches account B', (t) => {
  test('no endpoint of A reads, changes or learns of B\'s servers and keys', async () => {
    const a = await registerUser(t, 'Alice');
    const b = await registerUser(t, 'Bob');
    const bServer = await server(t, b, { name: 'b-db', tags: ['secret'] });
    const bTrashed = await server(t, b, { name: 'b-old' });
    const bSuspended = await server(t, b, { name: 'b-suspended' });
    await t.store.db.updateTable('servers')
      .set({ status: 'suspended', suspended_at: t.clock.now().toISOString(), suspended_reason: 'no_card_on_file' })
      .where('id', '=', bSuspended.id).execute();
    assert.equal((await api(t, 'DELETE', `/api/v1/servers/${bTrashed.id}?confirm=true`, { token: b.token })).status, 200);
    const bKey = await createKey(t, b.token, ['read']);
    await server(t, a, { name: 'a-web', tags: ['secret'] });

    const aPurger = await createKey(t, a.token, ['write'], ['servers:purge']);
    assert.equal((await api(t, 'POST', '/api/v1/account/verify-password', { token: aPurger.secret, body: { password: PASSWORD } })).status, 200);

    for (const id of [bServer.id, bSuspended.id]) {
      await sameAsMissing(t, 'GET', (x) => `/api/v1/servers/${x}`, a.token, id);
      await sameAsMissing(t, 'PATCH', (x) => `/api/v1/servers/${x}`, a.token, id, { name: 'pwned' });
      await sameAsMissing(t, 'DELETE', (x) => `/api/v1/servers/${x}?confirm=true`, a.token, id);
      await sameAsMissing(t, 'POST', (x) => `/api/v1/servers/${x}/rotate-key`, a.token, id);
      await sameAsMissing(t, 'POST', (x) => `/api/v1/servers/${x}/restore`, a.token, id);
    }
    await sameAsMissing(t, 'POST', (x) => `/api/v1/servers/${x}/restore`, a.token, bTrashed.id);
    await sameAsMissing(t, 'DELETE', (x) => `/api/v1/trashed-servers/${x}?confirm=true`, aPurger.secret, bTrashed.id);
    await sameAsMissing(t, 'DELETE', (x) => `/api/v1/account/keys/${x}`, a.token, bKey.id);

    const list = await api(t, 'GET', '/api/v1/servers?tag=secret', { token: a.token });
    assert.deepEqual(list.body.servers.map((s: { name: string }) => s.name), ['a-web']);
    assert.deepEqual((await api(t, 'GET', '/api/v1/trashed-servers', { token: a.token })).body.servers, []);
    assert.equal((await api(t, 'GET', '/api/v1/account/keys', { token: a.token })).body.keys.length, 1);
    assert.deepEqual((await api(t, 'POST', '/api/v1/servers/restore-all', { token: a.token })).body.restored, 0);
    const me = await api(t, 'GET', '/api/v1/auth/me', { token: a.token });
    assert.equal(me.body.servers_count, 1);
    const billing = await api(t, 'GET', '/api/v1/billing/status', { token: a.token });
    assert.equal(billing.body.active_server_count, 1);
    assert.equal(billing.body.suspended_no_card_count, 0);

    // B's things are untouched.
    const bView = await api(t, 'GET', `/api/v1/servers/${bServer.id}`, { token: b.token });
    assert.equal(bView.body.name, 'b-db');
    assert.equal((await api(t, 'GET', `/api/v1/servers/${bSuspended.id}`, { token: b.token })).body.status, 'suspended');
    assert.equal((await api(t, 'GET', '/api/v1/trashed-servers', { token: b.token })).body.servers.length, 1);
    assert.equal((await api(t, 'GET', '/api/v1/auth/me', { token: bKey.secret })).status, 200);
  });

  test('a page cursor of one account does not leak the other\'s servers', async () => {
    const a = await registerUser(t);
    const b = await registerUser(t);
    for (let i = 0; i < 3; i++) await server(t, b, { name: `b-${i}` });
    await server(t, a, { name: 'a-0' });
    await server(t, a, { name: 'a-1' });
    const bPage = await api(t, 'GET', '/api/v1/servers?limit=1', { token: b.token });
    assert.ok(bPage.body.next_cursor);
    const aWithB = await api(t, 'GET', `/api/v1/servers?limit=100&cursor=${encodeURIComponent(bPage.body.next_cursor)}`, { token: a.token });
    if (aWithB.status === 200) {
      for (const s of aWithB.body.servers) assert.match(s.name, /^a-/);
    } else {
      expectEnvelope(aWithB, 400, 'validation_failed');
    }
  });

  test('idempotency keys are per account', async () => {
    const a = await registerUser(t);
    const b = await registerUser(t);
    const headers = { 'idempotency-key': 'shared-key-1' };
    const ra = await api(t, 'POST', '/api/v1/servers', { token: a.token, body: { name: 'same' }, headers });
    const rb = await api(t, 'POST', '/api/v1/servers', { token: b.token, body: { name: 'same' }, headers });
    assert.equal(ra.status, 201);
    assert.equal(rb.status, 201);
    assert.notEqual(ra.body.server.id, rb.body.server.id);
    assert.equal(rb.headers['idempotency-replayed'], undefined);
  });
});
