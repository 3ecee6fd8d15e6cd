import assert from 'node:assert/strict';
import { test } from 'node:test';
import { api, createKey, describeEachStore, expectEnvelope, type ApiResponse, type TestApp } from './helpers/app.js';
import { fixtureText, latestRow, minimalSnapshot, pastGate, push, reporter, serverRow } from './helpers/ingest.js';
import { purger, suspendServer, trashServer } from './helpers/servers.js';

const check = (t: TestApp, authorization: string | null): Promise<ApiResponse> =>
  api(t, 'GET', '/api/v1/ingest', authorization === null ? {} : { headers: { authorization } });

/** Both ingest endpoints refuse the credential the same way. */
async function expectRefused(t: TestApp, authorization: string | null, code: 'unauthorized' | 'invalid_collector_key', label: string): Promise<void> {
  const posted = await push(t, '', minimalSnapshot(), { authorization });
  assert.equal(posted.status, 401, `POST ${label}: ${posted.raw}`);
  expectEnvelope(posted, 401, code);
  const got = await check(t, authorization);
  assert.equal(got.status, 401, `GET ${label}: ${got.raw}`);
  expectEnvelope(got, 401, code);
}

describeEachStore('POST and GET /ingest authentication', (t) => {
  test('no credential is 401 unauthorized', async () => {
    await expectRefused(t, null, 'unauthorized', 'no header');
  });

  test('anything that is not shaped like a collector key is 401 invalid_collector_key', async () => {
    const r = await reporter(t);
    const hex = r.key.slice(4);
    const malformed = [
      'Bearer', 'Bearer ', `Basic ${Buffer.from(`x:${r.key}`).toString('base64')}`, r.key, `Token ${r.key}`,
      `Bearer col_${hex.slice(1)}`, `Bearer col_${hex}0`, `Bearer col_${hex.toUpperCase()}`, `Bearer COL_${hex}`,
      `Bearer col_${'g'.repeat(40)}`, `Bearer ${hex}`, `Bearer ${r.key} extra`, `Bearer col-${hex}`,
    ];
    for (const authorization of malformed) await expectRefused(t, authorization, 'invalid_collector_key', authorization);
    assert.equal(await latestRow(t, r.server.id), undefined);
  });

  test('a well-formed key no server holds is 401 invalid_collector_key', async () => {
    await expectRefused(t, `Bearer col_${'0'.repeat(40)}`, 'invalid_collector_key', 'unknown key');
  });

  test('account keys and session tokens are 401 invalid_collector_key', async () => {
    const r = await reporter(t);
    const admin = await createKey(t, r.user.token, ['admin']);
    await expectRefused(t, `Bearer ${admin.secret}`, 'invalid_collector_key', 'account key');
    await expectRefused(t, `Bearer ${r.user.token}`, 'invalid_collector_key', 'session token');
  });

  test('after rotation the old key is 401 and the new one works at once', async () => {
    const r = await reporter(t);
    assert.equal((await push(t, r.key, minimalSnapshot())).status, 200);
    const rotated = await api(t, 'POST', `/api/v1/servers/${r.server.id}/rotate-key`, { token: r.user.token });
    assert.equal(rotated.status, 200);
    pastGate(t);
    await expectRefused(t, `Bearer ${r.key}`, 'invalid_collector_key', 'rotated-out key');
    const fresh = await push(t, rotated.body.collector_key, minimalSnapshot());
    assert.equal(fresh.status, 200, fresh.raw);
    assert.deepEqual((await check(t, `Bearer ${rotated.body.collector_key}`)).body, { success: true, server: { id: r.server.id, name: r.server.name } });
  });

  test('a trashed server\'s key is 401 and works again once the server is restored', async () => {
    const r = await reporter(t, { name: 'in-and-out' });
    await trashServer(t, r.user.token, r.server.id);
    await expectRefused(t, `Bearer ${r.key}`, 'invalid_collector_key', 'trashed');
    assert.equal((await serverRow(t, r.server.id)).last_seen_at, null, 'a refused push records nothing');
    assert.equal((await api(t, 'POST', `/api/v1/servers/${r.server.id}/restore`, { token: r.user.token })).status, 200);
    assert.equal((await push(t, r.key, minimalSnapshot())).status, 200);
  });

  test('a purged server\'s key is 401', async () => {
    const { owner, key } = await purger(t);
    const r = await reporter(t, {}, owner);
    assert.equal((await push(t, r.key, fixtureText('snapshot-baremetal.json'))).status, 200);
    await trashServer(t, owner.token, r.server.id);
    const purged = await api(t, 'DELETE', `/api/v1/trashed-servers/${r.server.id}?confirm=true`, { token: key });
    assert.equal(purged.status, 200, purged.raw);
    pastGate(t);
    await expectRefused(t, `Bearer ${r.key}`, 'invalid_collector_key', 'purged');
  });

  test('a suspended server keeps reporting: suspension is historical billing state, not a stop', async () => {
    const r = await reporter(t);
    await suspendServer(t, r.user, r.server.id);
    assert.equal((await push(t, r.key, fixtureText('snapshot-vm-debian12.json'))).status, 200);
    const row = await serverRow(t, r.server.id);
    assert.equal(row.status, 'suspended', 'ingest does not change the status');
    assert.equal(row.last_seen_at, t.clock.now().toISOString());
    assert.equal((await check(t, `Bearer ${r.key}`)).status, 200);
  });

  test('order: a malformed key is refused before the body is read; a well-formed key is looked up with the snapshot, after the body checks', async () => {
    const r = await reporter(t);
    expectEnvelope(await push(t, 'col_123', 'not json'), 401, 'invalid_collector_key');
    expectEnvelope(await push(t, r.key, 'not json'), 400, 'invalid_json');
    expectEnvelope(await push(t, `col_${'1'.repeat(40)}`, 'not json'), 400, 'invalid_json');
    expectEnvelope(await push(t, `col_${'1'.repeat(40)}`, minimalSnapshot()), 401, 'invalid_collector_key');
  });
});

describeEachStore('GET /ingest', (t) => {
  test('a valid key answers 200 {success, server: {id, name}} and records nothing', async () => {
    const r = await reporter(t, { name: 'checked' });
    const res = await check(t, `Bearer ${r.key}`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { success: true, server: { id: r.server.id, name: 'checked' } });
    const row = await serverRow(t, r.server.id);
    assert.equal(row.last_seen_at, null);
    assert.equal(row.last_ingest_at, null);
    assert.equal((await push(t, r.key, minimalSnapshot())).status, 200, 'a key check does not close the gate');
  });

  test('shows the name the first snapshot gave a placeholder server', async () => {
    const r = await reporter(t);
    assert.match((await check(t, `Bearer ${r.key}`)).body.server.name, /^pending-/);
    assert.equal((await push(t, r.key, fixtureText('snapshot-vm-debian12.json'))).status, 200);
    assert.equal((await check(t, `Bearer ${r.key}`)).body.server.name, 'vm');
  });

  test('works during the gate: checking a key is not a push', async () => {
    const r = await reporter(t);
    assert.equal((await push(t, r.key, minimalSnapshot())).status, 200);
    assert.equal((await check(t, `Bearer ${r.key}`)).status, 200);
  });
});
