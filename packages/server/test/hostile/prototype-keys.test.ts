import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { hostSnapshot } from '../helpers/alerts.js';
import { api, describeEachStore, registerUser, type TestUser } from '../helpers/app.js';
import { pastGate, push, reporter } from '../helpers/ingest.js';
import { createServer } from '../helpers/servers.js';
import { assertStoreUnchanged, storeRows } from '../helpers/store-rows.js';
import { checkAnswer } from './sweep.js';

/**
 * `__proto__` and `constructor.prototype` never get past the JSON parser
 * (bodies.test.ts). The other names of Object.prototype are ordinary JSON
 * member names and values: where a request names an alert type, channel
 * type, profile, scope or threshold by one, it is an unknown name (400),
 * never a lookup that finds a function; where a body carries them as keys,
 * they are unknown fields (dropped, or kept verbatim by ingest) and nothing
 * reads them as the object's own methods.
 */

const PROTO_NAMES = ['constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__', '__lookupGetter__', 'isPrototypeOf'];

describeEachStore('names of Object.prototype in requests', (t) => {
  let user: TestUser;
  let serverId: string;
  before(async () => {
    user = await registerUser(t);
    serverId = (await createServer(t, user.token, { name: 'proto-host' })).id;
  });

  test('as an alert type, channel type, profile, scope or threshold key: 400 at that field, nothing changed', async () => {
    const before = await storeRows(t.store);
    for (const name of PROTO_NAMES) {
      const cases: Array<[string, 'POST' | 'PUT' | 'PATCH' | 'DELETE', string, unknown, string]> = [
        ['mute', 'POST', `/api/v1/servers/${serverId}/mutes`, { alert_type: name }, '/alert_type'],
        ['unmute', 'DELETE', `/api/v1/servers/${serverId}/mutes`, { alert_type: name }, '/alert_type'],
        ['channel type', 'POST', '/api/v1/channels', { name: 'c', channel_type: name, config: { url: 'http://127.0.0.1:9/x' } }, '/channel_type'],
        ['profile', 'PATCH', `/api/v1/servers/${serverId}`, { profile: name }, '/profile'],
        ['profile on register', 'POST', '/api/v1/servers', { name: 'p', profile: name }, '/profile'],
        ['scope', 'POST', '/api/v1/account/keys', { name: 'k', scopes: [name] }, '/scopes/0'],
        ['capability', 'POST', '/api/v1/account/keys', { name: 'k', scopes: ['read'], capabilities: [name] }, '/capabilities/0'],
        ['threshold key', 'PUT', `/api/v1/servers/${serverId}/config-overrides`, { thresholds: { [name]: { warning: 1 } } }, `/thresholds/${name}`],
      ];
      for (const [label, method, url, body, field] of cases) {
        const res = await api(t, method, url, { token: user.token, body });
        checkAnswer(res, { status: 400, code: 'validation_failed', field }, `${label} ${JSON.stringify(name)}`);
      }
    }
    await assertStoreUnchanged(t.store, before, 'prototype names as values');
  });

  test('as unknown keys of a registration: dropped; the server has only its own fields', async () => {
    const body: Record<string, unknown> = { name: 'keys-host', tags: ['a'] };
    for (const name of PROTO_NAMES) body[name] = { polluted: true };
    const res = await api(t, 'POST', '/api/v1/servers', { token: user.token, body });
    assert.equal(res.status, 201, res.raw);
    const server = (await api(t, 'GET', `/api/v1/servers/${res.body.server.id}`, { token: user.token })).body;
    for (const name of PROTO_NAMES) assert.ok(!Object.hasOwn(server, name), `${name} came back`);
    assert.deepEqual([server.name, server.tags], ['keys-host', ['a']]);
    const channel = await api(t, 'POST', '/api/v1/channels', {
      token: user.token, body: { name: 'keys hook', channel_type: 'webhook', config: { url: 'http://127.0.0.1:9/x', toString: 1, constructor: 'x', valueOf: null } },
    });
    assert.equal(channel.status, 201, channel.raw);
    assert.deepEqual(channel.body.config, { url: 'http://127.0.0.1:9/****', secret: null });
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  test('as keys all through a snapshot: kept verbatim, rules and metrics still work, nothing polluted', async () => {
    const r = await reporter(t);
    const snapshot = hostSnapshot(t, { uptime: 86_400, disks: [{ mount: '/', percent_used: 97 }], firewall: false }) as Record<string, any>;
    const hostile = Object.fromEntries(PROTO_NAMES.map((name) => [name, 1]));
    Object.assign(snapshot, hostile);
    Object.assign(snapshot.system, hostile);
    Object.assign(snapshot.disks[0], hostile);
    Object.assign(snapshot.security.firewall, hostile);
    snapshot.extra = { nested: [{ ...hostile, __lookupSetter__: 'x' }] };
    const res = await push(t, r.key, snapshot);
    assert.equal(res.status, 200, res.raw);
    assert.deepEqual([res.body.new_alerts, res.body.active_alerts], [2, 2], 'disk_space_high and no_firewall, as without the extra keys');
    const stored = await t.store.db.selectFrom('latest_snapshots').select('snapshot').where('server_id', '=', r.server.id).executeTakeFirstOrThrow();
    assert.deepEqual(JSON.parse(stored.snapshot), snapshot, 'the snapshot is stored as sent');
    pastGate(t);
    const health = await api(t, 'GET', `/api/v1/servers/${r.server.id}/health`, { token: r.user.token });
    assert.equal(health.status, 200, health.raw);
    assert.equal(health.body.current.disk_max_percent, 97);
    for (const metric of ['cpu', 'disk']) {
      const history = await api(t, 'GET', `/api/v1/servers/${r.server.id}/health/history?metric=${metric}`, { token: r.user.token });
      assert.equal(history.status, 200, history.raw);
    }
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(typeof ({} as Record<string, unknown>).toString, 'function');
  });
});
