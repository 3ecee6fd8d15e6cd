import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BODY_LIMIT_BYTES } from '../src/app.js';
import { PASSWORD, api, describeEachStore, expectEnvelope, registerUser, uniqueEmail } from './helpers/app.js';

describeEachStore('request ids', (t) => {
  test('every response carries X-Request-Id, equal to request_id in errors', async () => {
    const ok = await api(t, 'GET', '/healthz');
    assert.match(String(ok.headers['x-request-id']), /^req_[A-Za-z0-9_-]{16}$/);
    const err = await api(t, 'GET', '/api/v1/nope');
    assert.equal(err.body.request_id, err.headers['x-request-id']);
  });

  test('a well-formed incoming id is kept; a malformed one is replaced', async () => {
    const kept = await api(t, 'GET', '/api/v1/auth/me', { headers: { 'x-request-id': 'trace-1234abcd' } });
    assert.equal(kept.headers['x-request-id'], 'trace-1234abcd');
    assert.equal(kept.body.request_id, 'trace-1234abcd');
    for (const bad of ['short', 'has space in it', 'x'.repeat(200), 'evil\u00e9chars!!']) {
      const res = await api(t, 'GET', '/healthz', { headers: { 'x-request-id': bad } });
      assert.notEqual(res.headers['x-request-id'], bad);
      assert.match(String(res.headers['x-request-id']), /^req_/);
    }
  });
});

describeEachStore('unknown paths and wrong verbs', (t) => {
  test('an unknown path is 404 not_found in the envelope, before authentication', async () => {
    const env = expectEnvelope(await api(t, 'GET', '/api/v1/does-not-exist'), 404, 'not_found');
    assert.equal(env.retryable, false);
    assert.equal(env.retry_after_seconds, null);
    expectEnvelope(await api(t, 'POST', '/api/v2/auth/login'), 404, 'not_found');
  });

  test('a wrong verb is 405 method_not_allowed with Allow', async () => {
    const res = await api(t, 'DELETE', '/api/v1/auth/login');
    expectEnvelope(res, 405, 'method_not_allowed');
    assert.equal(res.headers.allow, 'POST');
    const me = await api(t, 'PUT', '/api/v1/auth/me');
    expectEnvelope(me, 405, 'method_not_allowed');
    assert.deepEqual(String(me.headers.allow).split(', ').sort(), ['GET', 'HEAD']);
  });

  test('405 also for parametric paths', async () => {
    const res = await api(t, 'PATCH', '/api/v1/account/keys/key_whatever');
    expectEnvelope(res, 405, 'method_not_allowed');
    assert.equal(res.headers.allow, 'DELETE');
  });

  test('documentation_url uses PUBLIC_URL when set, else the request origin', async () => {
    const res = await api(t, 'GET', '/api/v1/nope', { headers: { host: 'kiln.example:8080' } });
    assert.equal(res.body.documentation_url, 'http://kiln.example:8080/docs/errors#not_found');
  });
});

describeEachStore('malformed requests', (t) => {
  const register = '/api/v1/auth/register';

  test('malformed JSON is 400 invalid_json', async () => {
    for (const rawBody of ['{"email": ', '{email: 1}', '[1,2', 'nul', '{"a":1}}']) {
      const res = await api(t, 'POST', register, { rawBody, headers: { 'content-type': 'application/json' } });
      expectEnvelope(res, 400, 'invalid_json');
    }
  });

  test('an empty JSON body is 400 invalid_json; no body at all is validation_failed', async () => {
    expectEnvelope(await api(t, 'POST', register, { rawBody: '', headers: { 'content-type': 'application/json' } }), 400, 'invalid_json');
    expectEnvelope(await api(t, 'POST', register), 400, 'validation_failed');
  });

  test('a JSON value that is not an object is validation_failed', async () => {
    for (const body of [[], 'text', 42, null]) {
      const res = await api(t, 'POST', register, { rawBody: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
      expectEnvelope(res, 400, 'validation_failed');
    }
  });

  test('prototype-pollution keys are refused and change nothing', async () => {
    const email = uniqueEmail();
    for (const rawBody of [
      `{"email":"${email}","password":"${PASSWORD}","__proto__":{"verified":true}}`,
      `{"email":"${email}","password":"${PASSWORD}","constructor":{"prototype":{"verified":true}}}`,
    ]) {
      const res = await api(t, 'POST', register, { rawBody, headers: { 'content-type': 'application/json' } });
      expectEnvelope(res, 400, 'invalid_json');
    }
    expectEnvelope(await api(t, 'POST', '/api/v1/auth/login', { body: { email, password: PASSWORD } }), 401, 'invalid_credentials');
    assert.equal(({} as Record<string, unknown>).verified, undefined);
  });

  test('another content type is 415 unsupported_media_type', async () => {
    const res = await api(t, 'POST', register, { rawBody: 'email=a', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expectEnvelope(res, 415, 'unsupported_media_type');
  });

  test('a body over the limit is 413 payload_too_large', async () => {
    const rawBody = JSON.stringify({ email: uniqueEmail(), password: PASSWORD, name: 'x'.repeat(BODY_LIMIT_BYTES) });
    expectEnvelope(await api(t, 'POST', register, { rawBody, headers: { 'content-type': 'application/json' } }), 413, 'payload_too_large');
  });

  test('huge strings and wrong types are validation_failed naming the field', async () => {
    const huge = await api(t, 'POST', register, { body: { email: uniqueEmail(), password: PASSWORD, name: 'n'.repeat(101) } });
    assert.equal(expectEnvelope(huge, 400, 'validation_failed').details[0].field, '/name');
    const typed = await api(t, 'POST', register, { body: { email: uniqueEmail(), password: 12345678901234 } });
    assert.equal(expectEnvelope(typed, 400, 'validation_failed').details[0].field, '/password');
    const ctrl = await api(t, 'POST', register, { body: { email: uniqueEmail(), password: PASSWORD, name: 'bad\r\nX-Injected: 1' } });
    assert.equal(expectEnvelope(ctrl, 400, 'validation_failed').details[0].field, '/name');
  });

  test('unicode names count characters, not bytes', async () => {
    const name = '🔥'.repeat(100);
    const res = await api(t, 'POST', register, { body: { email: uniqueEmail(), password: PASSWORD, name } });
    assert.equal(res.status, 201);
    assert.equal(res.body.user.name, name);
    const me = await registerUser(t, 'Zoë Ünïcødé 日本');
    assert.equal(me.user.name, 'Zoë Ünïcødé 日本');
  });
});

describeEachStore('probes', (t) => {
  test('/healthz and /readyz answer ok while the store is reachable', async () => {
    assert.deepEqual((await api(t, 'GET', '/healthz')).body, { status: 'ok' });
    assert.deepEqual((await api(t, 'GET', '/readyz')).body, { status: 'ok' });
  });
});
