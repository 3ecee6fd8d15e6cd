import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { buildApp } from '../src/app.js';
import { DEFAULT_CSP } from '../src/http/security-headers.js';
import { logMailer } from '../src/lib/mailer.js';
import { api, expectEnvelope, registerUser, startApp, testConfig, type ApiResponse, type TestApp } from './helpers/app.js';
import { FakeClock } from './helpers/clock.js';
import { createTestStore, storeKinds } from './helpers/stores.js';

const kind = storeKinds()[0]!;

function expectSecurityHeaders(res: ApiResponse, what: string, csp: string | null = DEFAULT_CSP): void {
  assert.equal(res.headers['x-content-type-options'], 'nosniff', what);
  assert.equal(res.headers['x-frame-options'], 'DENY', what);
  assert.equal(res.headers['referrer-policy'], 'no-referrer', what);
  if (csp) assert.equal(res.headers['content-security-policy'], csp, what);
  assert.match(String(res.headers['content-security-policy']), /frame-ancestors 'none'/, what);
  assert.equal(res.headers['strict-transport-security'], undefined, `${what}: no HSTS without an https PUBLIC_URL`);
}

describe('security headers on every response', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp(kind);
  });
  after(() => t.close());

  test('successes, client errors, unknown paths and wrong verbs all carry them', async () => {
    const user = await registerUser(t);
    const cases: [string, Promise<ApiResponse>, number][] = [
      ['GET /healthz', api(t, 'GET', '/healthz'), 200],
      ['GET /api/v1/version', api(t, 'GET', '/api/v1/version'), 200],
      ['POST /auth/register', api(t, 'POST', '/api/v1/auth/register', { body: { email: `h${Date.now()}@example.com`, password: 'a long enough password' } }), 201],
      ['POST /auth/logout', api(t, 'POST', '/api/v1/auth/logout', { token: user.token }), 204],
      ['broken JSON', api(t, 'POST', '/api/v1/auth/login', { rawBody: '{', headers: { 'content-type': 'application/json' } }), 400],
      ['no credential', api(t, 'GET', '/api/v1/servers'), 401],
      ['unknown API path', api(t, 'GET', '/api/v1/nothing-here'), 404],
      ['unknown path outside the API', api(t, 'GET', '/nothing-here'), 404],
      ['wrong verb', api(t, 'PUT', '/api/v1/servers'), 405],
    ];
    for (const [what, pending, status] of cases) {
      const res = await pending;
      assert.equal(res.status, status, what);
      expectSecurityHeaders(res, what);
    }
  });

  test('a 429 carries them', async () => {
    const ip = '192.0.2.200';
    for (let i = 0; i < 100; i++) await api(t, 'GET', '/healthz', { ip });
    const res = await api(t, 'GET', '/healthz', { ip });
    expectEnvelope(res, 429, 'rate_limited');
    expectSecurityHeaders(res, '429');
  });

  test('a URL the router cannot decode gets the envelope, a request id and the headers too', async () => {
    for (const url of ['/api/v1/%zz', '/api/v1/servers/%E0%A4%A']) {
      const res = await t.app.inject({ method: 'GET', url });
      const parsed: ApiResponse = { status: res.statusCode, body: JSON.parse(res.body), headers: res.headers, raw: res.body };
      expectEnvelope(parsed, 404, 'not_found');
      expectSecurityHeaders(parsed, url);
    }
  });

  test('the HTML pages send a policy of their own: no script, and only their own style by hash', async () => {
    for (const path of ['/docs', '/docs/errors']) {
      const res = await api(t, 'GET', path);
      assert.equal(res.status, 200);
      const csp = String(res.headers['content-security-policy']);
      expectSecurityHeaders(res, path, null);
      const style = /<style>([\s\S]*?)<\/style>/.exec(res.raw)?.[1];
      assert.ok(style, `${path} has its inline style`);
      assert.equal((res.raw.match(/<style/g) ?? []).length, 1, 'one style element, the hashed one');
      assert.ok(csp.includes(`'sha256-${createHash('sha256').update(style).digest('base64')}'`), `${path}: the style's hash is allowed`);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|script-src/);
      assert.match(csp, /^default-src 'none';/);
      assert.doesNotMatch(res.raw, /<script|\sstyle=|\son[a-z]+=/i, 'nothing inline the policy would block');
    }
  });
});

describe('a 500 carries the security headers', () => {
  test('an unexpected error', async () => {
    const { store, dispose } = await createTestStore(kind);
    const logger = pino({ level: 'silent' });
    const app = await buildApp({ config: testConfig(), store, clock: new FakeClock(), mailer: logMailer(logger), logger, fetch: globalThis.fetch });
    app.get('/api/v1/test-boom', { config: { auth: 'public' } }, async () => {
      throw new Error('boom');
    });
    try {
      const res = await api({ app }, 'GET', '/api/v1/test-boom');
      expectEnvelope(res, 500, 'internal_error');
      expectSecurityHeaders(res, '500');
    } finally {
      await app.close();
      await dispose();
    }
  });
});

describe('Strict-Transport-Security', () => {
  test('is sent, on every response, only when PUBLIC_URL is https', async () => {
    const secure = await startApp(kind, { config: { publicUrl: 'https://kiln.example.com' } });
    const plain = await startApp(kind, { config: { publicUrl: 'http://kiln.internal:8080' } });
    try {
      for (const path of ['/healthz', '/api/v1/nothing-here', '/docs']) {
        assert.equal((await api(secure, 'GET', path)).headers['strict-transport-security'], 'max-age=31536000', path);
        assert.equal((await api(plain, 'GET', path)).headers['strict-transport-security'], undefined, path);
      }
    } finally {
      await secure.close();
      await plain.close();
    }
  });
});
