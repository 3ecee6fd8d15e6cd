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

    const lines = t.logs.join('').trim().split('\n');
    assert.ok(lines.length > 10);
    for (const line of lines) JSON.parse(line);
    assert.ok(lines.some((line) => JSON.parse(line).request_id), 'request lines carry request_id');
    const all = t.logs.join('');
    for (const secret of [PASSWORD, 'a wrong password', u.token, login.body.token, key.secret]) {
      assert.equal(all.includes(secret), false, `log contains ${secret.slice(0, 12)}…`);
    }
  });
});
