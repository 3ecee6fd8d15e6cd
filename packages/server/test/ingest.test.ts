import assert from 'node:assert/strict';
import { test } from 'node:test';
import { extractMetrics } from '../src/features/health/metrics.js';
import { storedValues } from '../src/features/health/rollups.js';
import { evaluateRules } from '../src/rules/catalog.js';
import { api, describeEachStore, expectEnvelope } from './helpers/app.js';
import {
  FIXTURES, fixture, fixtureText, getServer, latestRow, minimalSnapshot, push, pushGzip, reporter, sampleCount, serverRow,
} from './helpers/ingest.js';

describeEachStore('POST /ingest accepts real and realistic snapshots', (t) => {
  for (const name of FIXTURES) {
    test(`${name}, sent byte for byte, is accepted and stored exactly as sent`, async () => {
      const r = await reporter(t);
      const text = fixtureText(name);
      const res = await push(t, r.key, text);
      assert.equal(res.status, 200, res.raw);
      // The alert engine's own test (alerts-fixtures) checks which alerts; here only that the counts are its findings.
      const raised = evaluateRules({ snapshot: JSON.parse(text), previous: null, thresholds: {}, now: t.clock.now(), minAgentVersion: t.config.minAgentVersion }).findings.length;
      assert.deepEqual(res.body, { success: true, received_at: t.clock.now().toISOString(), new_alerts: raised, active_alerts: raised });
      assert.match(res.body.received_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

      const latest = await latestRow(t, r.server.id);
      assert.ok(latest, 'the latest snapshot is kept');
      assert.equal(latest.snapshot, text, 'stored without re-serialising');
      assert.equal(latest.received_at, res.body.received_at);
      const expected = extractMetrics(JSON.parse(text));
      assert.deepEqual(JSON.parse(latest.metrics), storedValues(expected));
      const samples = await t.store.db.selectFrom('metric_samples').selectAll().where('server_id', '=', r.server.id).execute();
      assert.equal(samples.length, 1);
      assert.equal(samples[0]!.ts, res.body.received_at);
      // The latest snapshot and the history sample hold the same stored values (4 decimals), serialised once.
      assert.equal(samples[0]!.metrics, latest.metrics);
      const sampled = JSON.parse(samples[0]!.metrics) as Record<string, number>;
      assert.deepEqual(Object.keys(sampled).sort(), Object.keys(expected).sort());
      for (const [series, value] of Object.entries(expected)) assert.ok(Math.abs(sampled[series]! - value) < 0.001, series);
    });
  }

  test('the real agent\'s VM snapshot fills the server row', async () => {
    const r = await reporter(t);
    assert.equal((await push(t, r.key, fixtureText('snapshot-vm-debian12.json'))).status, 200);
    const server = await getServer(t, r);
    assert.equal(server.name, 'vm', 'the placeholder name gives way to the reported hostname');
    assert.equal(server.hostname, 'vm');
    assert.equal(server.ip, '192.0.2.2');
    assert.equal(server.os_type, 'debian');
    assert.equal(server.os_version, '12');
    assert.equal(server.collector_version, '0.10.1');
    assert.equal(server.last_seen_at, t.clock.now().toISOString());
    assert.equal(server.dmi_vendor, 'generic');
    assert.equal(server.dmi_product, null, 'product_name null: nothing known');
    assert.equal(server.ipmi_sensors_count, 0);
    assert.equal(server.disk_health_rollup, 'healthy', 'no SMART drives');
    assert.deepEqual(server.hardware, {
      cpu_cores: 2, ram_mb: 24106, os: 'Debian GNU/Linux 12 (bookworm)', kernel: '6.18.44-fc-v595', architecture: null,
    });
    const row = await serverRow(t, r.server.id);
    assert.equal(row.name_is_placeholder, 0);
    assert.equal(row.last_ingest_at, t.clock.now().toISOString());
  });

  test('the bare-metal snapshot: DMI, IPMI sensors and the SMART rollup', async () => {
    const r = await reporter(t);
    assert.equal((await push(t, r.key, fixtureText('snapshot-baremetal.json'))).status, 200);
    const server = await getServer(t, r);
    assert.equal(server.name, 'db-01.fra1.example.net');
    assert.equal(server.hostname, 'db-01.fra1.example.net');
    assert.equal(server.ip, '198.51.100.23');
    assert.equal(server.os_type, 'ubuntu');
    assert.equal(server.os_version, '22.04.4');
    assert.equal(server.dmi_vendor, 'supermicro');
    assert.equal(server.dmi_product, 'SYS-2029U-TR4');
    assert.equal(server.ipmi_sensors_count, fixture('snapshot-baremetal.json').ipmi.sensors.length);
    assert.equal(server.disk_health_rollup, 'declining', 'one NVMe at 81 % wear, one disk past 40,000 hours');
    assert.deepEqual(server.hardware, { cpu_cores: 16, ram_mb: 257675, os: 'Ubuntu 22.04.4 LTS', kernel: '5.15.0-105-generic', architecture: 'x86_64' });
  });

  test('the large host: 128 cores, 24 disks, 16 NICs', async () => {
    const r = await reporter(t, { name: 'storage seven' });
    const snapshot = fixture('snapshot-large-host.json');
    assert.equal(snapshot.cpu.cores.length, 128);
    assert.equal(snapshot.disks.length, 24);
    assert.equal(snapshot.smart.length, 24);
    assert.equal(snapshot.network.length, 16);
    assert.equal((await push(t, r.key, fixtureText('snapshot-large-host.json'))).status, 200);
    const server = await getServer(t, r);
    assert.equal(server.name, 'storage seven', 'a chosen name stays');
    assert.equal(server.hostname, 'stor-07', 'but the missing hostname is filled');
    assert.equal(server.os_type, 'rocky');
    assert.equal(server.os_version, '9.4');
    assert.equal(server.dmi_vendor, 'dell');
    assert.equal(server.dmi_product, 'PowerEdge R7525');
    assert.equal(server.ipmi_sensors_count, snapshot.ipmi.sensors.length);
    assert.equal(server.disk_health_rollup, 'healthy');
    assert.deepEqual(server.hardware, { cpu_cores: 128, ram_mb: 1031530, os: 'Rocky Linux 9.4 (Blue Onyx)', kernel: snapshot.system.kernel, architecture: 'x86_64' });
    const metrics = JSON.parse((await latestRow(t, r.server.id))!.metrics);
    assert.equal(Object.keys(metrics).filter((k) => k.startsWith('disk:')).length, 24);
  });

  test('unknown fields anywhere are accepted and kept in the stored snapshot', async () => {
    const r = await reporter(t);
    const snapshot = fixture('snapshot-baremetal.json');
    snapshot.future_block = { nested: { deep: [1, 'two', null, { three: true }] } };
    snapshot.system.secure_boot = true;
    snapshot.smart[0].nvme_critical_warning = 0;
    snapshot.ipmi.sensors[0].lower_non_recoverable = null;
    snapshot.security.selinux = { mode: 'enforcing' };
    const text = JSON.stringify(snapshot);
    assert.equal((await push(t, r.key, text)).status, 200);
    const stored = (await latestRow(t, r.server.id))!.snapshot;
    assert.equal(stored, text);
    assert.deepEqual(JSON.parse(stored), snapshot);
  });

  test('null is accepted wherever a value may be unknown: every block and every field inside', async () => {
    const nulled = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(nulled);
      if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, nulled(v)]));
      return null;
    };
    for (const name of FIXTURES) {
      const snapshot = fixture(name);
      const leaves = { ...(nulled(snapshot) as Record<string, unknown>), timestamp: snapshot.timestamp };
      const r = await reporter(t);
      assert.equal((await push(t, r.key, leaves)).status, 200, `${name} with null leaves`);
      const blocks = Object.fromEntries(Object.keys(snapshot).map((k) => [k, null]));
      const r2 = await reporter(t);
      const res = await push(t, r2.key, { ...blocks, timestamp: snapshot.timestamp, system: {} });
      assert.equal(res.status, 200, `${name} with null blocks: ${res.raw}`);
    }
    const r = await reporter(t);
    assert.equal((await push(t, r.key, minimalSnapshot({ expected_reboot: null, smart: [null], network: [null] }))).status, 200);
  });

  test('only timestamp and system are required; expected_reboot may be true or an object', async () => {
    for (const extra of [{}, { expected_reboot: true }, { expected_reboot: false }, { expected_reboot: { reason: 'kernel update', at: '2026-11-22T11:50:00Z' } }]) {
      const r = await reporter(t);
      const res = await push(t, r.key, minimalSnapshot(extra));
      assert.equal(res.status, 200, res.raw);
      assert.equal(await sampleCount(t, r.server.id), 1);
    }
  });

  test('a gzip body (Content-Encoding gzip, x-gzip, any case) is decompressed; the stored text is the decompressed JSON', async () => {
    for (const encoding of ['gzip', 'x-gzip', 'GZip']) {
      const r = await reporter(t);
      const text = fixtureText('snapshot-large-host.json');
      const res = await pushGzip(t, r.key, text, encoding);
      assert.equal(res.status, 200, `${encoding}: ${res.raw}`);
      assert.equal((await latestRow(t, r.server.id))!.snapshot, text);
    }
    const r = await reporter(t);
    assert.equal((await push(t, r.key, fixtureText('snapshot-baremetal.json'), { headers: { 'content-encoding': 'identity' } })).status, 200);
  });

  test('the response has exactly success, received_at, new_alerts and active_alerts', async () => {
    const r = await reporter(t);
    const res = await push(t, r.key, minimalSnapshot());
    assert.deepEqual(Object.keys(res.body).sort(), ['active_alerts', 'new_alerts', 'received_at', 'success']);
    assert.match(String(res.headers['content-type']), /^application\/json/);
  });

  test('collector keys stay refused everywhere else', async () => {
    const r = await reporter(t);
    expectEnvelope(await api(t, 'GET', '/api/v1/servers', { token: r.key }), 401, 'invalid_token');
    expectEnvelope(await api(t, 'GET', `/api/v1/servers/${r.server.id}`, { token: r.key }), 401, 'invalid_token');
  });
});
