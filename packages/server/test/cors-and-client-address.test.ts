import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { clientBucketId, parseTrustProxy } from '../src/http/client-ip.js';
import { api, expectEnvelope, startApp, type ApiResponse, type TestApp } from './helpers/app.js';
import { storeKinds } from './helpers/stores.js';

const kind = storeKinds()[0]!;
const ORIGIN = 'https://dash.example.com';

const preflight = (t: TestApp, origin: string, ip?: string) => api(t, 'OPTIONS', '/api/v1/servers', {
  ip, headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
});

/** Sends `count` requests from one socket address and returns the last status. */
async function lastStatus(t: TestApp, count: number, request: (i: number) => Promise<ApiResponse>): Promise<number> {
  let status = 0;
  for (let i = 0; i < count; i++) status = (await request(i)).status;
  return status;
}

describe('CORS', () => {
  test('is off by default: no preflight answer, no CORS headers', async () => {
    const t = await startApp(kind);
    try {
      const res = await preflight(t, ORIGIN);
      expectEnvelope(res, 405, 'method_not_allowed');
      assert.equal(res.headers['access-control-allow-origin'], undefined);
      assert.equal((await api(t, 'GET', '/api/v1/version', { headers: { origin: ORIGIN } })).headers['access-control-allow-origin'], undefined);
    } finally {
      await t.close();
    }
  });

  describe('with CORS_ORIGINS listing origins', () => {
    let t: TestApp;
    before(async () => {
      t = await startApp(kind, { config: { corsOrigins: [ORIGIN, 'http://localhost:5173'] } });
    });
    after(() => t.close());

    test('a listed origin gets its preflight answered before authentication, without credentials', async () => {
      const res = await preflight(t, ORIGIN);
      assert.equal(res.status, 204);
      assert.equal(res.headers['access-control-allow-origin'], ORIGIN);
      assert.match(String(res.headers['access-control-allow-methods']), /\bPOST\b/);
      assert.match(String(res.headers['access-control-allow-headers']), /Authorization.*Idempotency-Key/);
      assert.match(String(res.headers.vary), /Origin/);
      assert.equal(res.headers['access-control-allow-credentials'], undefined);
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
    });

    test('answers to a listed origin expose Retry-After and X-Request-Id, errors included', async () => {
      for (const [path, status] of [['/api/v1/version', 200], ['/api/v1/servers', 401], ['/api/v1/nothing', 404]] as const) {
        const res = await api(t, 'GET', path, { headers: { origin: 'http://localhost:5173' } });
        assert.equal(res.status, status);
        assert.equal(res.headers['access-control-allow-origin'], 'http://localhost:5173', path);
        assert.match(String(res.headers['access-control-expose-headers']), /Retry-After.*X-Request-Id/);
      }
    });

    test('another origin gets neither a preflight answer nor CORS headers', async () => {
      const res = await preflight(t, 'https://evil.example.net');
      assert.equal(res.status, 405);
      assert.equal(res.headers['access-control-allow-origin'], undefined);
      const get = await api(t, 'GET', '/api/v1/version', { headers: { origin: 'https://evil.example.net' } });
      assert.equal(get.headers['access-control-allow-origin'], undefined);
      assert.match(String(get.headers.vary), /Origin/, 'caches must not serve one origin\'s answer to another');
    });

    test('preflights count on the per-IP tier, and the 429 still carries CORS headers', async () => {
      const ip = '192.0.2.150';
      assert.equal(await lastStatus(t, 100, () => preflight(t, ORIGIN, ip)), 204);
      const res = await preflight(t, ORIGIN, ip);
      expectEnvelope(res, 429, 'rate_limited');
      assert.equal(res.headers['access-control-allow-origin'], ORIGIN);
    });
  });

  test('CORS_ORIGINS=* allows any origin with a wildcard, never with credentials', async () => {
    const t = await startApp(kind, { config: { corsOrigins: ['*'] } });
    try {
      const res = await preflight(t, 'https://anywhere.example.org');
      assert.equal(res.status, 204);
      assert.equal(res.headers['access-control-allow-origin'], '*');
      assert.equal(res.headers['access-control-allow-credentials'], undefined);
    } finally {
      await t.close();
    }
  });
});

describe('the client address of the per-IP tier', () => {
  test('without TRUST_PROXY, X-Forwarded-For is ignored: the socket address counts', async () => {
    const t = await startApp(kind);
    try {
      const ip = '192.0.2.10';
      const forged = (i: number) => api(t, 'GET', '/healthz', { ip, headers: { 'x-forwarded-for': `198.51.100.${i % 250}` } });
      assert.equal(await lastStatus(t, 100, forged), 200);
      expectEnvelope(await forged(7), 429, 'rate_limited');
    } finally {
      await t.close();
    }
  });

  test('with TRUST_PROXY=true, the address the proxy appended counts, not what the client claimed before it', async () => {
    const t = await startApp(kind, { config: { trustProxy: true } });
    try {
      const proxy = '10.0.0.2';
      const viaProxy = (client: string, claimed?: string) =>
        api(t, 'GET', '/healthz', { ip: proxy, headers: { 'x-forwarded-for': claimed ? `${claimed}, ${client}` : client } });
      assert.equal(await lastStatus(t, 150, (i) => viaProxy(`198.51.100.${i}`)), 200, 'one proxy, many clients');
      assert.equal(await lastStatus(t, 100, (i) => viaProxy('198.51.100.200', `203.0.113.${i}`)), 200);
      expectEnvelope(await viaProxy('198.51.100.200', '203.0.113.250'), 429, 'rate_limited');
    } finally {
      await t.close();
    }
  });

  test('with TRUST_PROXY listing proxies, X-Forwarded-For counts only when a listed proxy sent it', async () => {
    const t = await startApp(kind, { config: { trustProxy: ['10.0.0.0/8'] } });
    try {
      const send = (socket: string, i: number) => api(t, 'GET', '/healthz', { ip: socket, headers: { 'x-forwarded-for': `198.51.100.${i % 250}` } });
      assert.equal(await lastStatus(t, 150, (i) => send('10.1.2.3', i)), 200);
      assert.equal(await lastStatus(t, 100, (i) => send('192.0.2.99', i)), 200);
      expectEnvelope(await send('192.0.2.99', 1), 429, 'rate_limited');
    } finally {
      await t.close();
    }
  });

  test('IPv6 clients count per /64; IPv4-mapped addresses as IPv4', async () => {
    const t = await startApp(kind);
    try {
      const hosts = ['2001:db8:1:2::1', '2001:db8:1:2:ffff::9', '2001:DB8:1:2:0:0:0:abc'];
      assert.equal(await lastStatus(t, 100, (i) => api(t, 'GET', '/healthz', { ip: hosts[i % 3] })), 200);
      expectEnvelope(await api(t, 'GET', '/healthz', { ip: '2001:db8:1:2::77' }), 429, 'rate_limited');
      assert.equal((await api(t, 'GET', '/healthz', { ip: '2001:db8:1:3::1' })).status, 200, 'the next /64 is another client');
    } finally {
      await t.close();
    }
    assert.equal(clientBucketId('::ffff:192.0.2.1'), '192.0.2.1');
    assert.equal(clientBucketId('2001:db8::1'), '2001:db8:0:0::/64');
    assert.equal(clientBucketId('fe80::1%eth0'), 'fe80:0:0:0::/64');
    assert.equal(clientBucketId('203.0.113.9'), '203.0.113.9');
  });

  test('TRUST_PROXY accepts true/false, a hop count, or proxy addresses and CIDRs', () => {
    assert.equal(parseTrustProxy('true'), true);
    assert.equal(parseTrustProxy('off'), false);
    assert.equal(parseTrustProxy('2'), 2);
    assert.deepEqual(parseTrustProxy('10.0.0.0/8, 127.0.0.1,::1'), ['10.0.0.0/8', '127.0.0.1', '::1']);
    for (const bad of ['proxy.internal', '10.0.0.0/33', '10.0.0.1/8/1', ',']) assert.equal(parseTrustProxy(bad), null, bad);
  });
});
