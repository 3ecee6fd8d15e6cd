import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.js';
import { DEFAULT_TIERS } from '../src/http/rate-limit/tiers.js';

const base = { SECRET_KEY: 'x'.repeat(40), DATA_DIR: '/nonexistent-kiln-test' };
const load = (env: Record<string, string>) => loadConfig({ ...base, ...env });

describe('settings of the limits, proxies and CORS', () => {
  test('defaults: the spec\'s limits on, no proxy trusted, CORS off', () => {
    const config = load({});
    assert.equal(config.trustProxy, false);
    assert.deepEqual(config.corsOrigins, []);
    assert.equal(config.rateLimits.enabled, true);
    assert.deepEqual(config.rateLimits.tiers, DEFAULT_TIERS);
    assert.deepEqual(DEFAULT_TIERS.ip, { capacity: 100, refillPerSecond: 10 });
    assert.deepEqual(DEFAULT_TIERS['server-rotate-key'], { capacity: 10, refillPerSecond: 10 / 3600 });
  });

  test('RATE_LIMITS overrides named tiers with capacity and refill per second, minute or hour', () => {
    const { tiers } = load({ RATE_LIMITS: 'server-create:40000:1000/s, password:5:5/h,key:60:60/min' }).rateLimits;
    assert.deepEqual(tiers['server-create'], { capacity: 40000, refillPerSecond: 1000 });
    assert.deepEqual(tiers.password, { capacity: 5, refillPerSecond: 5 / 3600 });
    assert.deepEqual(tiers.key, { capacity: 60, refillPerSecond: 1 });
    assert.deepEqual(tiers.ip, DEFAULT_TIERS.ip);
    for (const bad of ['servers:1:1/s', 'ip:100', 'ip:0:1/s', 'ip:10:0/s', 'ip:10:1/day']) {
      assert.throws(() => load({ RATE_LIMITS: bad }), (err: unknown) => err instanceof ConfigError && err.message.startsWith('RATE_LIMITS'), bad);
    }
    assert.equal(load({ RATE_LIMITS_ENABLED: 'false' }).rateLimits.enabled, false);
  });

  test('CORS_ORIGINS takes origins or *, and refuses paths and non-origins', () => {
    assert.deepEqual(load({ CORS_ORIGINS: 'https://dash.example.com, http://localhost:5173/' }).corsOrigins, ['https://dash.example.com', 'http://localhost:5173']);
    assert.deepEqual(load({ CORS_ORIGINS: '*' }).corsOrigins, ['*']);
    for (const bad of ['dash.example.com', 'https://dash.example.com/app', 'file:///tmp']) {
      assert.throws(() => load({ CORS_ORIGINS: bad }), ConfigError, bad);
    }
  });

  test('TRUST_PROXY takes booleans, hops or proxy addresses', () => {
    assert.equal(load({ TRUST_PROXY: 'true' }).trustProxy, true);
    assert.equal(load({ TRUST_PROXY: '2' }).trustProxy, 2);
    assert.deepEqual(load({ TRUST_PROXY: '10.0.0.0/8,::1' }).trustProxy, ['10.0.0.0/8', '::1']);
    assert.throws(() => load({ TRUST_PROXY: 'the-proxy' }), /TRUST_PROXY must be/);
  });
});
