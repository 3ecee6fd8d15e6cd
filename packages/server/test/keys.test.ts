import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MINUTE_MS } from '../src/lib/clock.js';
import { PASSWORD, api, createKey, describeEachStore, expectEnvelope, registerUser } from './helpers/app.js';

describeEachStore('account keys', (t) => {
  test('create returns the secret once; list shows metadata only', async () => {
    const u = await registerUser(t);
    const res = await api(t, 'POST', '/api/v1/account/keys', {
      token: u.token, body: { name: 'ci', scopes: ['write'], capabilities: ['servers:purge'] },
    });
    assert.equal(res.status, 201);
    assert.match(res.body.secret, /^mk_[A-Za-z0-9_-]{43}$/);
    assert.match(res.body.key.id, /^key_/);
    assert.deepEqual(res.body.key.scopes, ['write']);
    assert.deepEqual(res.body.key.capabilities, ['servers:purge']);
    assert.equal(res.body.key.prefix, res.body.secret.slice(0, 11));
    assert.equal(res.body.key.last_used_at, null);

    const list = await api(t, 'GET', '/api/v1/account/keys', { token: u.token });
    assert.equal(list.status, 200);
    assert.equal(list.body.keys.length, 1);
    assert.equal(list.raw.includes(res.body.secret), false);
    assert.equal('secret' in list.body.keys[0], false);
  });

  test('a key authenticates, records last use, and can be revoked at once', async () => {
    const u = await registerUser(t);
    const key = await createKey(t, u.token, ['read']);
    const me = await api(t, 'GET', '/api/v1/auth/me', { token: key.secret });
    assert.equal(me.status, 200);
    assert.equal(me.body.id, u.user.id);
    const listed = await api(t, 'GET', '/api/v1/account/keys', { token: u.token });
    assert.equal(listed.body.keys[0].last_used_at, t.clock.now().toISOString());

    assert.equal((await api(t, 'DELETE', `/api/v1/account/keys/${key.id}`, { token: u.token })).status, 204);
    expectEnvelope(await api(t, 'GET', '/api/v1/auth/me', { token: key.secret }), 401, 'invalid_token');
    expectEnvelope(await api(t, 'DELETE', `/api/v1/account/keys/${key.id}`, { token: u.token }), 404, 'not_found');
  });

  test('an expired key stops working', async () => {
    const u = await registerUser(t);
    const expiresAt = new Date(t.clock.now().getTime() + 10 * MINUTE_MS).toISOString();
    const res = await api(t, 'POST', '/api/v1/account/keys', { token: u.token, body: { name: 'short', scopes: ['read'], expires_at: expiresAt } });
    assert.equal(res.status, 201);
    assert.equal(res.body.key.expires_at, expiresAt);
    assert.equal((await api(t, 'GET', '/api/v1/auth/me', { token: res.body.secret })).status, 200);
    t.clock.advance(10 * MINUTE_MS);
    expectEnvelope(await api(t, 'GET', '/api/v1/auth/me', { token: res.body.secret }), 401, 'invalid_token');
    t.clock.advance(-10 * MINUTE_MS);
  });

  test('validation of name, scopes, capabilities and expiry', async () => {
    const u = await registerUser(t);
    const cases: [unknown, string][] = [
      [{ name: 'k', scopes: [] }, '/scopes'],
      [{ name: 'k', scopes: ['root'] }, '/scopes/0'],
      [{ name: 'k', scopes: ['read', 'read'] }, '/scopes'],
      [{ name: 'k', scopes: ['read'], capabilities: ['servers:nuke'] }, '/capabilities/0'],
      [{ name: '', scopes: ['read'] }, '/name'],
      [{ scopes: ['read'] }, '/name'],
      [{ name: 'k', scopes: ['read'], expires_at: 'tomorrow' }, '/expires_at'],
      [{ name: 'k', scopes: ['read'], expires_at: '2000-01-01T00:00:00Z' }, '/expires_at'],
    ];
    for (const [body, field] of cases) {
      const res = await api(t, 'POST', '/api/v1/account/keys', { token: u.token, body });
      const env = expectEnvelope(res, 400, 'validation_failed');
      assert.ok(env.details.some((d: { field: string }) => d.field.startsWith(field)), `${JSON.stringify(body)} → ${res.raw}`);
    }
  });

  test('only admin credentials manage keys, and a key cannot grant more than it holds', async () => {
    const u = await registerUser(t);
    const reader = await createKey(t, u.token, ['read']);
    const writer = await createKey(t, u.token, ['write']);
    const admin = await createKey(t, u.token, ['admin']);
    expectEnvelope(await api(t, 'POST', '/api/v1/account/keys', { token: writer.secret, body: { name: 'x', scopes: ['read'] } }), 403, 'insufficient_scope');
    expectEnvelope(await api(t, 'DELETE', `/api/v1/account/keys/${reader.id}`, { token: writer.secret }), 403, 'insufficient_scope');
    assert.equal((await api(t, 'GET', '/api/v1/account/keys', { token: reader.secret })).status, 200);

    const child = await api(t, 'POST', '/api/v1/account/keys', { token: admin.secret, body: { name: 'child', scopes: ['write'] } });
    assert.equal(child.status, 201);
    const escalate = await api(t, 'POST', '/api/v1/account/keys', {
      token: admin.secret, body: { name: 'purger', scopes: ['admin'], capabilities: ['servers:purge'] },
    });
    expectEnvelope(escalate, 403, 'missing_capability');
  });
});

describeEachStore('POST /account/verify-password', (t) => {
  test('the right password verifies the calling credential for 5 minutes', async () => {
    const u = await registerUser(t);
    const key = await createKey(t, u.token, ['write'], ['servers:purge']);
    const res = await api(t, 'POST', '/api/v1/account/verify-password', { token: key.secret, body: { password: PASSWORD } });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { success: true, verified_until: new Date(t.clock.now().getTime() + 5 * MINUTE_MS).toISOString() });
    const withSession = await api(t, 'POST', '/api/v1/account/verify-password', { token: u.token, body: { password: PASSWORD } });
    assert.equal(withSession.status, 200);
  });

  test('a wrong password is 401 invalid_credentials; a missing one is 400', async () => {
    const u = await registerUser(t);
    expectEnvelope(await api(t, 'POST', '/api/v1/account/verify-password', { token: u.token, body: { password: 'wrong password!!' } }), 401, 'invalid_credentials');
    expectEnvelope(await api(t, 'POST', '/api/v1/account/verify-password', { token: u.token, body: {} }), 400, 'validation_failed');
    expectEnvelope(await api(t, 'POST', '/api/v1/account/verify-password', { body: { password: PASSWORD } }), 401, 'unauthorized');
  });
});
