import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MINUTE_MS } from '../src/lib/clock.js';
import { api, createKey, describeEachStore, expectEnvelope, registerUser, type TestApp } from './helpers/app.js';
import { createServer, trashServer } from './helpers/servers.js';

async function setup(t: TestApp) {
  const owner = await registerUser(t);
  const server = await createServer(t, owner.token, { name: 'app-1' });
  const health = (token = owner.token) => api(t, 'GET', `/api/v1/servers/${server.id}/health`, { token });
  /** What ingest does on an accepted snapshot, as far as the health endpoint reads it. */
  const snapshot = async (metrics: Record<string, number>) => {
    const now = t.clock.now().toISOString();
    await t.store.db.insertInto('latest_snapshots')
      .values({ server_id: server.id, received_at: now, snapshot: '{}', metrics: JSON.stringify(metrics) })
      .onConflict((oc) => oc.column('server_id').doUpdateSet({ received_at: now, metrics: JSON.stringify(metrics) }))
      .execute();
    await t.store.db.updateTable('servers').set({ last_seen_at: now, last_ingest_at: now }).where('id', '=', server.id).execute();
    return now;
  };
  const overrides = (value: unknown) =>
    t.store.db.updateTable('servers').set({ config_overrides: JSON.stringify(value) }).where('id', '=', server.id).execute();
  return { owner, server, health, snapshot, overrides };
}

const NO_VALUES = {
  cpu_percent: null, ram_percent: null, swap_used_mb: null, disk_max_percent: null,
  network_rx_mbps: null, network_tx_mbps: null, cpu_temp_c: null, active_alerts: 0,
};

describeEachStore('GET /servers/:id/health', (t) => {
  test('before the first snapshot: pending, never seen, no values', async () => {
    const s = await setup(t);
    const res = await s.health();
    assert.equal(res.status, 200, res.raw);
    assert.deepEqual(res.body, { server_id: s.server.id, status: 'pending', last_seen: null, current: NO_VALUES });
  });

  test('after a snapshot: healthy, last_seen, and the snapshot\'s values under their health names', async () => {
    const s = await setup(t);
    const seen = await s.snapshot({
      cpu_percent: 37.456, ram_percent: 61.2, swap_used_mb: 128, disk_max_percent: 88.1, 'disk:/': 88.1,
      rx_mbps: 12.3456, tx_mbps: 0.004, cpu_temp_c: 54,
    });
    const res = await s.health();
    assert.deepEqual(res.body, {
      server_id: s.server.id, status: 'healthy', last_seen: seen,
      current: { cpu_percent: 37.46, ram_percent: 61.2, swap_used_mb: 128, disk_max_percent: 88.1, network_rx_mbps: 12.35, network_tx_mbps: 0, cpu_temp_c: 54, active_alerts: 0 },
    });
  });

  test('a value the latest snapshot did not carry is null, even if an earlier one had it', async () => {
    const s = await setup(t);
    await s.snapshot({ cpu_percent: 10, cpu_temp_c: 70, rx_mbps: 1, tx_mbps: 1 });
    t.clock.advance(5 * MINUTE_MS);
    await s.snapshot({ cpu_percent: 11, ram_percent: 20 });
    const res = await s.health();
    assert.deepEqual(res.body.current, { ...NO_VALUES, cpu_percent: 11, ram_percent: 20 });
    assert.equal(res.body.status, 'healthy');
  });

  test('offline once 3 push intervals (default 300 s: 15 minutes) pass without a snapshot', async () => {
    const s = await setup(t);
    const seen = await s.snapshot({ cpu_percent: 1 });
    t.clock.advance(15 * MINUTE_MS - 1);
    assert.equal((await s.health()).body.status, 'healthy');
    t.clock.advance(1);
    const offline = await s.health();
    assert.equal(offline.body.status, 'offline');
    assert.equal(offline.body.last_seen, seen);
    assert.equal(offline.body.current.cpu_percent, 1, 'the last known values stay visible');
    await s.snapshot({ cpu_percent: 2 });
    assert.equal((await s.health()).body.status, 'healthy', 'a new snapshot brings it back');
  });

  test('config_overrides.interval_seconds sets the push interval', async () => {
    const s = await setup(t);
    await s.overrides({ interval_seconds: 60 });
    await s.snapshot({ cpu_percent: 1 });
    t.clock.advance(3 * MINUTE_MS - 1);
    assert.equal((await s.health()).body.status, 'healthy');
    t.clock.advance(1);
    assert.equal((await s.health()).body.status, 'offline');

    await s.overrides({ interval_seconds: 3600, thresholds: {} });
    assert.equal((await s.health()).body.status, 'healthy');
    t.clock.advance(3 * 60 * MINUTE_MS - 3 * MINUTE_MS);
    assert.equal((await s.health()).body.status, 'offline');
  });

  test('an interval_seconds that is not a positive number falls back to 300 s', async () => {
    const s = await setup(t);
    await s.snapshot({ cpu_percent: 1 });
    t.clock.advance(14 * MINUTE_MS);
    for (const bad of [0, -60, '60', null]) {
      await s.overrides({ interval_seconds: bad });
      assert.equal((await s.health()).body.status, 'healthy', `interval_seconds ${JSON.stringify(bad)}`);
    }
    t.clock.advance(MINUTE_MS);
    assert.equal((await s.health()).body.status, 'offline');
  });

  test('a snapshot pushed to /ingest shows in the health and the history', async () => {
    const s = await setup(t);
    const pushed = await api(t, 'POST', '/api/v1/ingest', {
      headers: { authorization: `Bearer ${s.server.api_key}` },
      body: {
        timestamp: t.clock.now().toISOString(),
        system: { hostname: 'app-1' },
        cpu: { idle_percent: 75.5 },
        memory: { total_mb: 8000, available_mb: 2000, swap_used_mb: 12 },
        disks: [{ mount: '/', percent_used: 40 }, { mount: '/data', percent_used: 91.256 }],
        network: [{ interface: 'lo', rx_bytes_sec: 1e9, tx_bytes_sec: 1e9 }, { interface: 'eth0', rx_bytes_sec: 1_250_000, tx_bytes_sec: 125_000 }],
      },
    });
    assert.equal(pushed.status, 200, pushed.raw);
    // /data at 91 % is a disk_space_high warning (85 %): the alert sets the status and the count.
    assert.deepEqual([pushed.body.new_alerts, pushed.body.active_alerts], [1, 1]);
    const health = await s.health();
    assert.equal(health.body.status, 'warning');
    assert.equal(health.body.last_seen, pushed.body.received_at);
    assert.deepEqual(health.body.current, {
      cpu_percent: 24.5, ram_percent: 75, swap_used_mb: 12, disk_max_percent: 91.26,
      network_rx_mbps: 10, network_tx_mbps: 1, cpu_temp_c: null, active_alerts: 1,
    });
    const minute = new Date(Math.floor(t.clock.now().getTime() / MINUTE_MS) * MINUTE_MS).toISOString();
    t.clock.advance(1000); // the default `to` is now, exclusive: a bucket starting at this very instant is not yet in range
    const disk = await api(t, 'GET', `/api/v1/servers/${s.server.id}/health/history?metric=disk`, { token: s.owner.token });
    assert.deepEqual(disk.body.series.map((x: any) => [x.name, x.points]), [
      ['disk_max_percent', [[minute, 91.26, 91.26, 91.26]]],
      ['disk:/', [[minute, 40, 40, 40]]],
      ['disk:/data', [[minute, 91.26, 91.26, 91.26]]],
    ]);
  });

  test('a pending server stays pending however long it waits', async () => {
    const s = await setup(t);
    t.clock.advance(24 * 60 * MINUTE_MS);
    assert.equal((await s.health()).body.status, 'pending');
  });

  test('another account\'s server, a trashed one and an unknown id are 404; a read key suffices', async () => {
    const s = await setup(t);
    const stranger = await registerUser(t);
    const foreign = expectEnvelope(await s.health(stranger.token), 404, 'not_found');
    const missing = expectEnvelope(await api(t, 'GET', '/api/v1/servers/srv_doesNotExist0000000000/health', { token: s.owner.token }), 404, 'not_found');
    assert.equal(foreign.message, missing.message);
    expectEnvelope(await api(t, 'GET', `/api/v1/servers/${s.server.id}/health`), 401, 'unauthorized');
    const reader = await createKey(t, s.owner.token, ['read']);
    assert.equal((await s.health(reader.secret)).status, 200);
    await trashServer(t, s.owner.token, s.server.id);
    expectEnvelope(await s.health(), 404, 'not_found');
  });
});
