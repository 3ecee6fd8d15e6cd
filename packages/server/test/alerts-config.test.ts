import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PROFILES } from '../src/features/servers/rules.js';
import { MINUTE_MS } from '../src/lib/clock.js';
import { ALERT_TYPES, RULES } from '../src/rules/catalog.js';
import { HOST_PROFILES } from '../src/rules/profiles.js';
import { activeKeys, hostSnapshot, pushOk } from './helpers/alerts.js';
import { api, createKey, describeEachStore, expectEnvelope, registerUser } from './helpers/app.js';
import { reporter } from './helpers/ingest.js';
import { trashServer } from './helpers/servers.js';

describeEachStore('GET /alert-rules and GET /host-profiles', (t) => {
  test('the catalog, public, every rule with its kind, category, thresholds and the profiles silencing it', async () => {
    const res = await api(t, 'GET', '/api/v1/alert-rules');
    assert.equal(res.status, 200, res.raw);
    assert.deepEqual(res.body.rules.map((r: any) => r.alert_type), [...ALERT_TYPES]);
    for (const rule of res.body.rules) {
      assert.deepEqual(Object.keys(rule).sort(), ['alert_type', 'category', 'description', 'kind', 'silenced_by_profiles', 'thresholds']);
    }
    const byType = new Map(res.body.rules.map((r: any) => [r.alert_type, r]));
    assert.deepEqual(byType.get('disk_space_high'), {
      alert_type: 'disk_space_high', kind: 'state', category: 'storage', description: RULES.find((r) => r.alert_type === 'disk_space_high')!.description,
      thresholds: { warning: 85, critical: 95, unit: 'percent used' }, silenced_by_profiles: [],
    });
    assert.deepEqual((byType.get('no_firewall') as any).silenced_by_profiles, ['marketplace_gpu']);
    assert.equal((byType.get('unexpected_reboot') as any).kind, 'event');
    assert.equal((byType.get('no_firewall') as any).thresholds, null);
  });

  test('the host profiles, public; the same profiles servers accept', async () => {
    const res = await api(t, 'GET', '/api/v1/host-profiles');
    assert.equal(res.status, 200, res.raw);
    assert.deepEqual(res.body, { profiles: HOST_PROFILES.map((p) => ({ id: p.id, label: p.label, silenced_alert_types: [...p.silenced_alert_types] })) });
    assert.deepEqual([...res.body.profiles.find((p: any) => p.id === 'marketplace_gpu')!.silenced_alert_types].sort(),
      ['gpu_power_cap_throttling', 'no_firewall', 'unattended_upgrades_disabled']);
    assert.deepEqual(res.body.profiles.map((p: any) => p.id), [...PROFILES]);
  });
});

describeEachStore('PUT /servers/:id/config-overrides', (t) => {
  const url = (id: string) => `/api/v1/servers/${id}/config-overrides`;

  test('replaces config_overrides and answers the server as GET does; the next snapshot uses the new levels', async () => {
    const r = await reporter(t);
    const token = r.user.token;
    const disks = [{ mount: '/', percent_used: 75 }];
    assert.deepEqual(await pushOk(t, r, hostSnapshot(t, { uptime: 5000, disks })), [0, 0]);
    const body = { thresholds: { disk_space_high: { warning: 70 }, ram_high: { warning: 10, critical: 3 } }, interval_seconds: 120 };
    const res = await api(t, 'PUT', url(r.server.id), { token, body });
    assert.equal(res.status, 200, res.raw);
    const get = await api(t, 'GET', `/api/v1/servers/${r.server.id}`, { token });
    assert.deepEqual(res.body, get.body);
    assert.deepEqual(res.body.config_overrides, body);
    t.clock.advance(MINUTE_MS);
    assert.deepEqual(await pushOk(t, r, hostSnapshot(t, { uptime: 5060, disks })), [1, 1]);
    assert.deepEqual(await activeKeys(t, r), ['disk_space_high / warning']);

    // A replacement, not a merge: {} restores the defaults.
    const cleared = await api(t, 'PUT', url(r.server.id), { token, body: {} });
    assert.deepEqual(cleared.body.config_overrides, {});
    t.clock.advance(MINUTE_MS);
    assert.deepEqual(await pushOk(t, r, hostSnapshot(t, { uptime: 5120, disks })), [0, 0]);
  });

  test('checked against the catalog: every problem is 400 validation_failed at its field, and nothing changes', async () => {
    const r = await reporter(t);
    const token = r.user.token;
    await api(t, 'PUT', url(r.server.id), { token, body: { thresholds: { cpu_high: { warning: 80 } } } });
    const cases: Array<[unknown, string]> = [
      [{ thresholds: { disk_full: { warning: 80 } } }, '/thresholds/disk_full'],
      [{ thresholds: { no_firewall: { warning: 1 } } }, '/thresholds/no_firewall'],
      [{ thresholds: { cpu_iowait_high: { critical: 50 } } }, '/thresholds/cpu_iowait_high/critical'],
      [{ thresholds: { nvme_wear_high: { info: 70 } } }, '/thresholds/nvme_wear_high/info'],
      [{ thresholds: { cpu_high: { warning: '90' } } }, '/thresholds/cpu_high/warning'],
      [{ thresholds: { cpu_high: { warning: 0 } } }, '/thresholds/cpu_high/warning'],
      [{ thresholds: { cpu_high: { warning: -5 } } }, '/thresholds/cpu_high/warning'],
      [{ thresholds: { cpu_high: { critical: 101 } } }, '/thresholds/cpu_high/critical'],
      [{ thresholds: { clock_drift: { critical: 1e12 } } }, '/thresholds/clock_drift/critical'],
      [{ thresholds: { disk_space_high: { warning: 96 } } }, '/thresholds/disk_space_high'],
      [{ thresholds: { disk_space_high: { warning: 90, critical: 80 } } }, '/thresholds/disk_space_high'],
      [{ thresholds: { ram_high: { warning: 1, critical: 2 } } }, '/thresholds/ram_high'],
      [{ thresholds: ['cpu_high'] }, '/thresholds'],
      [{ thresholds: { cpu_high: 90 } }, '/thresholds/cpu_high'],
      [{ interval_seconds: 59 }, '/interval_seconds'],
      [{ interval_seconds: 86_401 }, '/interval_seconds'],
      [{ interval_seconds: 90.5 }, '/interval_seconds'],
      [{ interval_seconds: '120' }, '/interval_seconds'],
      [{ interval_seconds: null }, '/interval_seconds'],
    ];
    for (const [body, field] of cases) {
      const res = await api(t, 'PUT', url(r.server.id), { token, body });
      const envelope = expectEnvelope(res, 400, 'validation_failed');
      assert.ok(envelope.details.some((d: any) => d.field === field), `${JSON.stringify(body)} → ${res.raw}`);
    }
    const all = await api(t, 'PUT', url(r.server.id), { token, body: { thresholds: { disk_full: {}, cpu_high: { warning: 0 }, swap_high: { critical: 200 } } } });
    assert.equal(expectEnvelope(all, 400, 'validation_failed').details.length, 3, 'every problem at once');
    expectEnvelope(await api(t, 'PUT', url('srv_unknown0000000000000'), { token, body: { interval_seconds: 1 } }), 400, 'validation_failed');
    assert.deepEqual((await api(t, 'GET', `/api/v1/servers/${r.server.id}`, { token })).body.config_overrides, { thresholds: { cpu_high: { warning: 80 } } });
  });

  test('401, 403 for a read key, 404 for other accounts, unknown and trashed servers', async () => {
    const r = await reporter(t);
    const read = await createKey(t, r.user.token, ['read']);
    const other = await registerUser(t);
    const body = { interval_seconds: 600 };
    expectEnvelope(await api(t, 'PUT', url(r.server.id), { body }), 401, 'unauthorized');
    expectEnvelope(await api(t, 'PUT', url(r.server.id), { token: read.secret, body }), 403, 'insufficient_scope');
    const foreign = expectEnvelope(await api(t, 'PUT', url(r.server.id), { token: other.token, body }), 404, 'not_found');
    const missing = expectEnvelope(await api(t, 'PUT', url('srv_doesNotExist0000000000'), { token: other.token, body }), 404, 'not_found');
    assert.equal(foreign.message, missing.message);
    assert.deepEqual((await api(t, 'GET', `/api/v1/servers/${r.server.id}`, { token: r.user.token })).body.config_overrides, {});
    await trashServer(t, r.user.token, r.server.id);
    expectEnvelope(await api(t, 'PUT', url(r.server.id), { token: r.user.token, body }), 404, 'not_found');
  });
});
