import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sha256Hex } from '../src/lib/crypto.js';
import { MINUTE_MS } from '../src/lib/clock.js';
import { PASSWORD, api, createKey, describeEachStore, expectEnvelope, registerUser } from './helpers/app.js';
import { createServer, purger, suspendServer, trashServer } from './helpers/servers.js';

describeEachStore('DELETE /servers/:server_id (move to trash)', (t) => {
  test('with confirm=true moves the server to the trash', async () => {
    const u = await registerUser(t);
    const server = await createServer(t, u.token, { name: 'doomed' });
    const res = await api(t, 'DELETE', `/api/v1/servers/${server.id}?confirm=true`, { token: u.token });
    assert.equal(res.status, 200);
    const now = t.clock.now().toISOString();
    assert.deepEqual(res.body, { success: true, id: server.id, trashed_at: now, permanent: false, restorable: true });
    expectEnvelope(await api(t, 'GET', `/api/v1/servers/${server.id}`, { token: u.token }), 404, 'not_found');
    assert.equal((await api(t, 'GET', '/api/v1/auth/me', { token: u.token })).body.servers_count, 0, 'a trashed server counts nowhere');
    expectEnvelope(await api(t, 'DELETE', `/api/v1/servers/${server.id}?confirm=true`, { token: u.token }), 404, 'not_found');
  });

  test('without confirm=true is 400 confirmation_required and changes nothing', async () => {
    const u = await registerUser(t);
    const server = await createServer(t, u.token);
    for (const query of ['', '?confirm=false', '?confirm=1', '?confirm=TRUE', '?confirm=', '?confirm=yes']) {
      const res = await api(t, 'DELETE', `/api/v1/servers/${server.id}${query}`, { token: u.token });
      expectEnvelope(res, 400, 'confirmation_required');
    }
    assert.equal((await api(t, 'GET', `/api/v1/servers/${server.id}`, { token: u.token })).status, 200);
  });

  test('unknown and other accounts\' servers are 404; a read-only key is 403', async () => {
    const owner = await registerUser(t);
    const stranger = await registerUser(t);
    const server = await createServer(t, owner.token);
    expectEnvelope(await api(t, 'DELETE', `/api/v1/servers/${server.id}?confirm=true`, { token: stranger.token }), 404, 'not_found');
    expectEnvelope(await api(t, 'DELETE', '/api/v1/servers/srv_unknown?confirm=true', { token: owner.token }), 404, 'not_found');
    const reader = await createKey(t, owner.token, ['read']);
    expectEnvelope(await api(t, 'DELETE', `/api/v1/servers/${server.id}?confirm=true`, { token: reader.secret }), 403, 'insufficient_scope');
    assert.equal((await api(t, 'GET', `/api/v1/servers/${server.id}`, { token: owner.token })).status, 200);
  });
});

describeEachStore('GET /trashed-servers', (t) => {
  test('lists trashed servers with trashed_at, most recently trashed first, own account only', async () => {
    const u = await registerUser(t);
    const other = await registerUser(t);
    const a = await createServer(t, u.token, { name: 'a' });
    const b = await createServer(t, u.token, { name: 'b' });
    await createServer(t, u.token, { name: 'live' });
    const theirs = await createServer(t, other.token, { name: 'theirs' });
    await trashServer(t, other.token, theirs.id);
    await trashServer(t, u.token, a.id);
    const aAt = t.clock.now().toISOString();
    t.clock.advance(MINUTE_MS);
    await trashServer(t, u.token, b.id);
    const res = await api(t, 'GET', '/api/v1/trashed-servers', { token: u.token });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.servers.map((s: { id: string }) => s.id), [b.id, a.id]);
    assert.equal(res.body.servers[1].trashed_at, aAt);
    assert.equal(res.body.servers[0].name, 'b');
    assert.ok('tags' in res.body.servers[0] && 'status' in res.body.servers[0]);
    const reader = await createKey(t, u.token, ['read']);
    assert.equal((await api(t, 'GET', '/api/v1/trashed-servers', { token: reader.secret })).status, 200);
  });
});

describeEachStore('POST /servers/:server_id/restore', (t) => {
  test('active → trashed → restored: back in the list with its data', async () => {
    const u = await registerUser(t);
    const server = await createServer(t, u.token, { name: 'phoenix', tags: ['t'] });
    await trashServer(t, u.token, server.id);
    const res = await api(t, 'POST', `/api/v1/servers/${server.id}/restore`, { token: u.token });
    assert.equal(res.status, 200);
    assert.equal(res.body.success, true);
    assert.equal(res.body.server.id, server.id);
    assert.equal(res.body.server.status, 'active');
    assert.deepEqual(res.body.server.tags, ['t']);
    assert.deepEqual(res.body.server.config_overrides, {});
    assert.equal(res.body.server.free_analysis_used, false);
    assert.deepEqual((await api(t, 'GET', `/api/v1/servers/${server.id}`, { token: u.token })).body, res.body.server);
    assert.deepEqual((await api(t, 'GET', '/api/v1/trashed-servers', { token: u.token })).body.servers, []);
  });

  test('suspended → active, clearing suspended_at and suspended_reason', async () => {
    const u = await registerUser(t);
    const server = await createServer(t, u.token);
    await suspendServer(t, u, server.id);
    const suspended = (await api(t, 'GET', `/api/v1/servers/${server.id}`, { token: u.token })).body;
    assert.equal(suspended.status, 'suspended');
    assert.equal(suspended.suspended_reason, 'no_card_on_file');
    assert.equal(suspended.suspended_at, t.clock.now().toISOString());
    const res = await api(t, 'POST', `/api/v1/servers/${server.id}/restore`, { token: u.token });
    assert.equal(res.status, 200);
    assert.equal(res.body.server.status, 'active');
    assert.equal(res.body.server.suspended_at, null);
    assert.equal(res.body.server.suspended_reason, null);
  });

  test('a server both trashed and suspended comes back active', async () => {
    const u = await registerUser(t);
    const server = await createServer(t, u.token);
    await suspendServer(t, u, server.id);
    await trashServer(t, u.token, server.id);
    const res = await api(t, 'POST', `/api/v1/servers/${server.id}/restore`, { token: u.token });
    assert.equal(res.status, 200);
    assert.equal(res.body.server.status, 'active');
    assert.equal(res.body.server.suspended_reason, null);
  });

  test('neither trashed nor suspended is 409 not_restorable; unknown or other account 404; read-only 403', async () => {
    const u = await registerUser(t);
    const stranger = await registerUser(t);
    const server = await createServer(t, u.token);
    expectEnvelope(await api(t, 'POST', `/api/v1/servers/${server.id}/restore`, { token: u.token }), 409, 'not_restorable');
    await trashServer(t, u.token, server.id);
    expectEnvelope(await api(t, 'POST', `/api/v1/servers/${server.id}/restore`, { token: stranger.token }), 404, 'not_found');
    expectEnvelope(await api(t, 'POST', '/api/v1/servers/srv_unknown/restore', { token: u.token }), 404, 'not_found');
    const reader = await createKey(t, u.token, ['read']);
    expectEnvelope(await api(t, 'POST', `/api/v1/servers/${server.id}/restore`, { token: reader.secret }), 403, 'insufficient_scope');
    assert.equal((await api(t, 'GET', `/api/v1/servers/${server.id}`, { token: u.token })).status, 404, 'still in the trash');
  });
});

describeEachStore('POST /servers/restore-all', (t) => {
  test('restores every live server suspended for no_card_on_file, and only those', async () => {
    const u = await registerUser(t);
    const other = await registerUser(t);
    const a = await createServer(t, u.token, { name: 'a' });
    t.clock.advance(1);
    const b = await createServer(t, u.token, { name: 'b' });
    const otherReason = await createServer(t, u.token, { name: 'abuse' });
    const trashedSuspended = await createServer(t, u.token, { name: 'trashed' });
    const active = await createServer(t, u.token, { name: 'active' });
    const theirs = await createServer(t, other.token, { name: 'theirs' });
    for (const id of [b.id, a.id, trashedSuspended.id]) await suspendServer(t, u, id);
    await suspendServer(t, u, otherReason.id, 'abuse');
    await suspendServer(t, other, theirs.id);
    await trashServer(t, u.token, trashedSuspended.id);

    const res = await api(t, 'POST', '/api/v1/servers/restore-all', { token: u.token });
    assert.equal(res.status, 200, 'restore-all is its own route, not /servers/:server_id');
    assert.deepEqual(res.body, { success: true, restored: 2, server_ids: [a.id, b.id] });
    const status = async (token: string, id: string) => (await api(t, 'GET', `/api/v1/servers/${id}`, { token })).body.status;
    assert.equal(await status(u.token, a.id), 'active');
    assert.equal(await status(u.token, otherReason.id), 'suspended');
    assert.equal(await status(u.token, active.id), 'active');
    assert.equal(await status(other.token, theirs.id), 'suspended');
    const trashed = (await api(t, 'GET', '/api/v1/trashed-servers', { token: u.token })).body.servers;
    assert.equal(trashed[0].status, 'suspended');

    assert.deepEqual((await api(t, 'POST', '/api/v1/servers/restore-all', { token: u.token })).body, { success: true, restored: 0, server_ids: [] });
    const reader = await createKey(t, u.token, ['read']);
    expectEnvelope(await api(t, 'POST', '/api/v1/servers/restore-all', { token: reader.secret }), 403, 'insufficient_scope');
  });

  test('GET /servers/restore-all is an unknown server, not the bulk action', async () => {
    const u = await registerUser(t);
    expectEnvelope(await api(t, 'GET', '/api/v1/servers/restore-all', { token: u.token }), 404, 'not_found');
  });
});

describeEachStore('POST /servers/:server_id/rotate-key', (t) => {
  test('replaces the collector key: new hash stored, old one gone, rotated_at set', async () => {
    const u = await registerUser(t);
    const server = await createServer(t, u.token);
    t.clock.advance(MINUTE_MS);
    const res = await api(t, 'POST', `/api/v1/servers/${server.id}/rotate-key`, { token: u.token });
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ['collector_key', 'message', 'rotated_at', 'server', 'success']);
    assert.deepEqual(res.body.server, { id: server.id });
    assert.match(res.body.collector_key, /^col_[0-9a-f]{40}$/);
    assert.notEqual(res.body.collector_key, server.api_key);
    assert.equal(res.body.rotated_at, t.clock.now().toISOString());
    const row = await t.store.db.selectFrom('servers').select(['collector_key_hash', 'key_rotated_at']).where('id', '=', server.id).executeTakeFirstOrThrow();
    assert.equal(row.collector_key_hash, sha256Hex(res.body.collector_key));
    assert.equal(row.key_rotated_at, res.body.rotated_at);
  });

  test('trashed, unknown and other accounts\' servers are 404; read-only 403', async () => {
    const u = await registerUser(t);
    const stranger = await registerUser(t);
    const server = await createServer(t, u.token);
    expectEnvelope(await api(t, 'POST', `/api/v1/servers/${server.id}/rotate-key`, { token: stranger.token }), 404, 'not_found');
    const reader = await createKey(t, u.token, ['read']);
    expectEnvelope(await api(t, 'POST', `/api/v1/servers/${server.id}/rotate-key`, { token: reader.secret }), 403, 'insufficient_scope');
    await trashServer(t, u.token, server.id);
    expectEnvelope(await api(t, 'POST', `/api/v1/servers/${server.id}/rotate-key`, { token: u.token }), 404, 'not_found');
    expectEnvelope(await api(t, 'POST', '/api/v1/servers/srv_unknown/rotate-key', { token: u.token }), 404, 'not_found');
    const row = await t.store.db.selectFrom('servers').select('collector_key_hash').where('id', '=', server.id).executeTakeFirstOrThrow();
    assert.equal(row.collector_key_hash, sha256Hex(server.api_key), 'nothing rotated');
  });
});

describeEachStore('DELETE /trashed-servers/:server_id (purge)', (t) => {
  test('trashed → destroyed: the row and its tags are gone and the id is 404 everywhere', async () => {
    const { owner, key } = await purger(t);
    const server = await createServer(t, owner.token, { tags: ['a', 'b'] });
    await trashServer(t, owner.token, server.id);
    const res = await api(t, 'DELETE', `/api/v1/trashed-servers/${server.id}?confirm=true`, { token: key });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { success: true, id: server.id, purged: true, permanent: true });
    assert.equal(await t.store.db.selectFrom('servers').select('id').where('id', '=', server.id).executeTakeFirst(), undefined);
    assert.deepEqual(await t.store.db.selectFrom('server_tags').selectAll().where('server_id', '=', server.id).execute(), []);
    for (const [method, path] of [
      ['GET', ''], ['PATCH', ''], ['DELETE', '?confirm=true'], ['POST', '/restore'], ['POST', '/rotate-key'],
    ] as const) {
      const res404 = await api(t, method, `/api/v1/servers/${server.id}${path}`, { token: owner.token, ...(method === 'PATCH' ? { body: {} } : {}) });
      expectEnvelope(res404, 404, 'not_found');
    }
    expectEnvelope(await api(t, 'DELETE', `/api/v1/trashed-servers/${server.id}?confirm=true`, { token: key }), 404, 'not_found');
    assert.deepEqual((await api(t, 'GET', '/api/v1/trashed-servers', { token: owner.token })).body.servers, []);
  });

  test('checks run in order: capability, exists, trashed, confirm, re-authentication', async () => {
    const { owner, key } = await purger(t);
    const server = await createServer(t, owner.token);
    const url = (id: string, confirm = true) => `/api/v1/trashed-servers/${id}${confirm ? '?confirm=true' : ''}`;

    // Capability first: a session, an admin key and a write key without servers:purge are refused before any lookup.
    const admin = await createKey(t, owner.token, ['admin']);
    for (const token of [owner.token, admin.secret]) {
      expectEnvelope(await api(t, 'DELETE', url(server.id), { token }), 403, 'missing_capability');
      expectEnvelope(await api(t, 'DELETE', url('srv_unknown'), { token }), 403, 'missing_capability');
    }
    const readPurge = await createKey(t, owner.token, ['read'], ['servers:purge']);
    expectEnvelope(await api(t, 'DELETE', url(server.id), { token: readPurge.secret }), 403, 'insufficient_scope');

    expectEnvelope(await api(t, 'DELETE', url('srv_unknown', false), { token: key }), 404, 'not_found');
    const stranger = await purger(t);
    expectEnvelope(await api(t, 'DELETE', url(server.id), { token: stranger.key }), 404, 'not_found');

    // active → purge: 409 not_trashed, even without confirm.
    expectEnvelope(await api(t, 'DELETE', url(server.id, false), { token: key }), 409, 'not_trashed');
    expectEnvelope(await api(t, 'DELETE', url(server.id), { token: key }), 409, 'not_trashed');

    await trashServer(t, owner.token, server.id);
    expectEnvelope(await api(t, 'DELETE', url(server.id, false), { token: key }), 400, 'confirmation_required');
    expectEnvelope(await api(t, 'DELETE', `/api/v1/trashed-servers/${server.id}?confirm=false`, { token: key }), 400, 'confirmation_required');

    const unverified = await createKey(t, owner.token, ['write'], ['servers:purge']);
    expectEnvelope(await api(t, 'DELETE', url(server.id), { token: unverified.secret }), 403, 'reauth_required');
    assert.ok(await t.store.db.selectFrom('servers').select('id').where('id', '=', server.id).executeTakeFirst(), 'nothing purged yet');
    assert.equal((await api(t, 'DELETE', url(server.id), { token: key })).status, 200);
  });

  test('re-authentication lasts 5 minutes and belongs to the one credential that made it', async () => {
    const { owner, key } = await purger(t);
    const sibling = await createKey(t, owner.token, ['write'], ['servers:purge']);
    // The session re-authenticating does not help a key either.
    assert.equal((await api(t, 'POST', '/api/v1/account/verify-password', { token: owner.token, body: { password: PASSWORD } })).status, 200);
    const first = await createServer(t, owner.token);
    const second = await createServer(t, owner.token);
    await trashServer(t, owner.token, first.id);
    await trashServer(t, owner.token, second.id);
    expectEnvelope(await api(t, 'DELETE', `/api/v1/trashed-servers/${first.id}?confirm=true`, { token: sibling.secret }), 403, 'reauth_required');

    t.clock.advance(5 * MINUTE_MS - 1000);
    assert.equal((await api(t, 'DELETE', `/api/v1/trashed-servers/${first.id}?confirm=true`, { token: key })).status, 200);
    t.clock.advance(1000);
    expectEnvelope(await api(t, 'DELETE', `/api/v1/trashed-servers/${second.id}?confirm=true`, { token: key }), 403, 'reauth_required');

    const again = await api(t, 'POST', '/api/v1/account/verify-password', { token: key, body: { password: PASSWORD } });
    assert.equal(again.status, 200);
    assert.equal((await api(t, 'DELETE', `/api/v1/trashed-servers/${second.id}?confirm=true`, { token: key })).status, 200);
  });
});
