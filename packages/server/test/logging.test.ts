import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PASSWORD, api, createKey, describeEachStore, registerUser } from './helpers/app.js';

describeEachStore('structured logs', (t) => {
  test('are JSON lines with the request id, and never hold passwords, tokens or keys', async () => {
    const u = await registerUser(t);
    const login = await api(t, 'POST', '/api/v1/auth/login', { body: { email: u.email, password: PASSWORD } });
    const key = await createKey(t, u.token, ['admin'], ['servers:purge']);
    await api(t, 'POST', '/api/v1/account/verify-password', { token: key.secret, body: { password: PASSWORD } });
    await api(t, 'POST', '/api/v1/auth/login', { body: { email: u.email, password: 'a wrong password' } });
    await api(t, 'GET', '/api/v1/auth/me', { token: `${login.body.token}x` });

    const lines = t.logs.join('').trim().split('\n').map((line) => JSON.parse(line));
    // One access line per request, with its request id, method, URL, status and duration.
    const access = lines.filter((line) => line.msg === 'request');
    assert.deepEqual(access.map((line) => [line.method, line.url, line.status]), [
      ['POST', '/api/v1/auth/register', 201],
      ['POST', '/api/v1/auth/login', 200],
      ['POST', '/api/v1/account/keys', 201],
      ['POST', '/api/v1/account/verify-password', 200],
      ['POST', '/api/v1/auth/login', 401],
      ['GET', '/api/v1/auth/me', 401],
    ]);
    for (const line of access) {
      assert.match(line.request_id, /^req_/);
      assert.equal(typeof line.ms, 'number');
    }
    const all = t.logs.join('');
    for (const secret of [PASSWORD, 'a wrong password', u.token, login.body.token, key.secret]) {
      assert.equal(all.includes(secret), false, `log contains ${secret.slice(0, 12)}…`);
    }
  });
});
