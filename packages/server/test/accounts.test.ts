import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DAY_MS } from '../src/lib/clock.js';
import { PASSWORD, api, describeEachStore, expectEnvelope, registerUser, uniqueEmail } from './helpers/app.js';

describeEachStore('POST /auth/register', (t) => {
  test('creates an unverified owner and returns a working session token', async () => {
    const email = uniqueEmail();
    const res = await api(t, 'POST', '/api/v1/auth/register', { body: { email, password: PASSWORD, name: 'Ada' } });
    assert.equal(res.status, 201);
    assert.match(res.body.user.id, /^usr_[A-Za-z0-9_-]{20}$/);
    assert.deepEqual(Object.keys(res.body.user).sort(), ['created_at', 'email', 'id', 'name', 'verified']);
    assert.equal(res.body.user.verified, false);
    assert.equal(res.body.user.name, 'Ada');
    assert.equal(res.body.user.created_at, t.clock.now().toISOString());
    const me = await api(t, 'GET', '/api/v1/auth/me', { token: res.body.token });
    assert.equal(me.status, 200);
    assert.equal(me.body.email, email);
    assert.equal(me.body.role, 'owner');
    assert.equal(me.body.servers_count, 0);
    assert.equal(me.body.plan, 'free');
  });

  test('name is optional and defaults to the local part of the address', async () => {
    const email = uniqueEmail('grace');
    const res = await api(t, 'POST', '/api/v1/auth/register', { body: { email, password: PASSWORD } });
    assert.equal(res.status, 201);
    assert.equal(res.body.user.name, email.split('@')[0]);
  });

  test('a duplicate e-mail, in any letter case, is 409 email_taken', async () => {
    const email = uniqueEmail('dup');
    assert.equal((await api(t, 'POST', '/api/v1/auth/register', { body: { email, password: PASSWORD } })).status, 201);
    const again = await api(t, 'POST', '/api/v1/auth/register', { body: { email: email.toUpperCase(), password: PASSWORD } });
    expectEnvelope(again, 409, 'email_taken');
  });

  test('rejects short passwords, bad addresses and missing fields with details', async () => {
    const short = await api(t, 'POST', '/api/v1/auth/register', { body: { email: uniqueEmail(), password: 'elevenchars' } });
    const env = expectEnvelope(short, 400, 'validation_failed');
    assert.equal(env.details[0].field, '/password');

    for (const email of ['no-at-sign', 'a@b', 'two@@example.com', 'space in@example.com', 'x@-bad-.com']) {
      const res = await api(t, 'POST', '/api/v1/auth/register', { body: { email, password: PASSWORD } });
      assert.equal(expectEnvelope(res, 400, 'validation_failed').details[0].field, '/email', email);
    }
    const missing = await api(t, 'POST', '/api/v1/auth/register', { body: { password: PASSWORD } });
    assert.equal(expectEnvelope(missing, 400, 'validation_failed').details[0].field, '/email');
    const wrongType = await api(t, 'POST', '/api/v1/auth/register', { body: { email: 42, password: PASSWORD } });
    expectEnvelope(wrongType, 400, 'validation_failed');
  });
});

describeEachStore('POST /auth/login and /auth/logout', (t) => {
  test('login returns a token valid for 7 days', async () => {
    const u = await registerUser(t);
    const res = await api(t, 'POST', '/api/v1/auth/login', { body: { email: u.email.toUpperCase(), password: PASSWORD } });
    assert.equal(res.status, 200);
    assert.equal(res.body.expires_at, new Date(t.clock.now().getTime() + 7 * DAY_MS).toISOString());
    assert.equal((await api(t, 'GET', '/api/v1/auth/me', { token: res.body.token })).status, 200);
  });

  test('a wrong password and an unknown e-mail get the same 401 invalid_credentials', async () => {
    const u = await registerUser(t);
    const wrong = await api(t, 'POST', '/api/v1/auth/login', { body: { email: u.email, password: 'not the password!' } });
    const unknown = await api(t, 'POST', '/api/v1/auth/login', { body: { email: uniqueEmail(), password: 'not the password!' } });
    const a = expectEnvelope(wrong, 401, 'invalid_credentials');
    const b = expectEnvelope(unknown, 401, 'invalid_credentials');
    assert.equal(a.message, b.message);
  });

  test('a session expires after 7 days', async () => {
    const u = await registerUser(t);
    t.clock.advance(7 * DAY_MS + 1000);
    expectEnvelope(await api(t, 'GET', '/api/v1/auth/me', { token: u.token }), 401, 'invalid_token');
    t.clock.advance(-(7 * DAY_MS + 1000));
  });

  test('logout revokes the token at once and answers 204', async () => {
    const u = await registerUser(t);
    const out = await api(t, 'POST', '/api/v1/auth/logout', { token: u.token });
    assert.equal(out.status, 204);
    assert.equal(out.raw, '');
    expectEnvelope(await api(t, 'GET', '/api/v1/auth/me', { token: u.token }), 401, 'invalid_token');
    expectEnvelope(await api(t, 'POST', '/api/v1/auth/logout', { token: u.token }), 401, 'invalid_token');
  });

  test('missing and malformed credentials', async () => {
    expectEnvelope(await api(t, 'GET', '/api/v1/auth/me'), 401, 'unauthorized');
    expectEnvelope(await api(t, 'GET', '/api/v1/auth/me', { headers: { authorization: 'Basic abc' } }), 401, 'invalid_token');
    expectEnvelope(await api(t, 'GET', '/api/v1/auth/me', { token: 'not-a-jwt' }), 401, 'invalid_token');
    expectEnvelope(await api(t, 'GET', '/api/v1/auth/me', { token: `mk_${'a'.repeat(43)}` }), 401, 'invalid_token');
    expectEnvelope(await api(t, 'GET', '/api/v1/auth/me', { token: `col_${'a'.repeat(40)}` }), 401, 'invalid_token');
  });
});
