import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { INGEST_BODY_LIMIT_BYTES } from '../src/features/ingest/routes.js';
import { describeEachStore, expectEnvelope, type TestApp } from './helpers/app.js';
import { fixture, fixtureText, latestRow, minimalSnapshot, push, pushGzip, reporter, sampleCount, serverRow } from './helpers/ingest.js';

const MiB = INGEST_BODY_LIMIT_BYTES;

/** A valid snapshot whose JSON text is exactly `bytes` long (padded through an unknown field). */
function snapshotOfSize(bytes: number): string {
  const base = JSON.stringify(minimalSnapshot({ padding: '' }));
  const text = JSON.stringify(minimalSnapshot({ padding: 'x'.repeat(bytes - base.length) }));
  assert.equal(Buffer.byteLength(text), bytes);
  return text;
}

/** Sets `value` at a dotted path (`disks.0.mount`) of a copy of `snapshot`. */
function withValue(snapshot: any, path: string, value: unknown): any {
  const copy = structuredClone(snapshot);
  const keys = path.split('.');
  let node = copy;
  for (const key of keys.slice(0, -1)) node = node[key];
  node[keys[keys.length - 1]!] = value;
  return copy;
}

async function expectRejected(t: TestApp, body: unknown, field: string, label = field): Promise<void> {
  const r = await reporter(t);
  const res = await push(t, r.key, body);
  const envelope = expectEnvelope(res, 400, 'validation_failed');
  assert.equal(envelope.details[0]?.field, field, `${label}: ${res.raw}`);
  assert.equal(await latestRow(t, r.server.id), undefined, `${label}: nothing stored`);
  assert.equal((await serverRow(t, r.server.id)).last_ingest_at, null, `${label}: the gate is not consumed`);
}

describeEachStore('POST /ingest body limit and encodings', (t) => {
  test('1 MiB of JSON is accepted; one byte more is 413 payload_too_large', async () => {
    const r = await reporter(t);
    assert.equal((await push(t, r.key, snapshotOfSize(MiB))).status, 200);
    const r2 = await reporter(t);
    expectEnvelope(await push(t, r2.key, snapshotOfSize(MiB + 1)), 413, 'payload_too_large');
    assert.equal(await latestRow(t, r2.server.id), undefined);
  });

  test('the limit counts decompressed bytes: a small gzip body that inflates past 1 MiB is 413', async () => {
    const r = await reporter(t);
    const exact = gzipSync(snapshotOfSize(MiB));
    assert.ok(exact.length < 10_000);
    assert.equal((await push(t, r.key, exact, { headers: { 'content-encoding': 'gzip' } })).status, 200);
    const r2 = await reporter(t);
    expectEnvelope(await pushGzip(t, r2.key, snapshotOfSize(MiB + 1)), 413, 'payload_too_large');
  });

  test('a gzip bomb is cut off at 1 MiB decompressed (413), and the service keeps answering', async () => {
    const r = await reporter(t);
    const bomb = gzipSync(Buffer.alloc(256 * MiB, 0x20), { level: 9 });
    assert.ok(bomb.length < MiB, 'the compressed body itself is within the limit');
    expectEnvelope(await push(t, r.key, bomb, { headers: { 'content-encoding': 'gzip' } }), 413, 'payload_too_large');
    assert.equal((await push(t, r.key, minimalSnapshot())).status, 200, 'the same server pushes normally right after');
  });

  test('a compressed body over 1 MiB is 413 before any decompression', async () => {
    const r = await reporter(t);
    const noise = Buffer.from(Array.from({ length: MiB + 1024 }, (_, i) => (i * 7919) % 251));
    expectEnvelope(await push(t, r.key, noise, { headers: { 'content-encoding': 'gzip' } }), 413, 'payload_too_large');
  });

  test('a corrupt, truncated or non-JSON gzip body is 400 invalid_json, never 500', async () => {
    const r = await reporter(t);
    const good = gzipSync(fixtureText('snapshot-vm-debian12.json'));
    const flipped = Buffer.from(good);
    flipped[flipped.length >> 1] ^= 0xff;
    const cases: [string, Buffer][] = [
      ['not gzip at all', Buffer.from('{"timestamp": "2026-11-22T12:00:00Z", "system": {}}')],
      ['truncated', good.subarray(0, good.length >> 1)],
      ['corrupted in the middle', flipped],
      ['empty', Buffer.alloc(0)],
      ['gzip of text', gzipSync('hello, not json')],
    ];
    for (const [label, body] of cases) {
      const res = await push(t, r.key, body, { headers: { 'content-encoding': 'gzip' } });
      assert.equal(res.status, 400, `${label}: ${res.raw}`);
      expectEnvelope(res, 400, 'invalid_json');
    }
    assert.equal(await latestRow(t, r.server.id), undefined);
  });

  test('other encodings are 415 unsupported_media_type with Accept-Encoding: gzip', async () => {
    const r = await reporter(t);
    for (const encoding of ['br', 'deflate', 'compress', 'zstd', 'gzip, gzip', 'gzip;q=1']) {
      const res = await push(t, r.key, fixtureText('snapshot-vm-debian12.json'), { headers: { 'content-encoding': encoding } });
      expectEnvelope(res, 415, 'unsupported_media_type');
      assert.equal(res.headers['accept-encoding'], 'gzip', encoding);
    }
  });

  test('a body that is not JSON: 415 for another content type, 400 invalid_json for broken JSON or bad UTF-8', async () => {
    const r = await reporter(t);
    expectEnvelope(await push(t, r.key, 'timestamp=now', { headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 415, 'unsupported_media_type');
    for (const text of ['{"timestamp":', '{"system": {}, }', '{"__proto__": {"x": 1}, "timestamp": "2026-11-22T12:00:00Z", "system": {}}']) {
      expectEnvelope(await push(t, r.key, text), 400, 'invalid_json');
    }
    const badUtf8 = Buffer.concat([Buffer.from('{"timestamp":"2026-11-22T12:00:00Z","system":{"hostname":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}}')]);
    expectEnvelope(await push(t, r.key, badUtf8), 400, 'invalid_json');
  });
});

describeEachStore('POST /ingest validation', (t) => {
  test('a body that is not an object, or without a timestamp or system, is 400 at the right pointer', async () => {
    for (const body of ['[]', '"snapshot"', '42', 'null', 'true']) await expectRejected(t, body, '/', body);
    await expectRejected(t, { system: {} }, '/timestamp');
    await expectRejected(t, { timestamp: '2026-11-22T12:00:00Z' }, '/system');
    await expectRejected(t, { timestamp: 'yesterday', system: {} }, '/timestamp');
    await expectRejected(t, { timestamp: null, system: {} }, '/timestamp');
    await expectRejected(t, { timestamp: 1763812800, system: {} }, '/timestamp');
    await expectRejected(t, { timestamp: '2026-11-22T12:00:00Z', system: null }, '/system');
    await expectRejected(t, { timestamp: '2026-11-22T12:00:00Z', system: ['vm'] }, '/system');
  });

  test('a wrong type in any block is 400 validation_failed with a JSON pointer to the field', async () => {
    const base = fixture('snapshot-baremetal.json');
    const cases: [string, unknown, string][] = [
      ['collector_version', 10, '/collector_version'],
      ['system.hostname', 5, '/system/hostname'],
      ['system.uptime_seconds', '90', '/system/uptime_seconds'],
      ['cpu', [], '/cpu'],
      ['cpu.user_percent', 'high', '/cpu/user_percent'],
      ['cpu.cores.3.idle_percent', '99', '/cpu/cores/3/idle_percent'],
      ['cpu.cores', { 0: {} }, '/cpu/cores'],
      ['memory.total_mb', '24106', '/memory/total_mb'],
      ['disks', {}, '/disks'],
      ['disks.1.mount', 7, '/disks/1/mount'],
      ['disks.0.percent_used', '15%', '/disks/0/percent_used'],
      ['smart.2.health', true, '/smart/2/health'],
      ['smart.1.percentage_used', '81', '/smart/1/percentage_used'],
      ['smart.4.reallocated_sectors', '0', '/smart/4/reallocated_sectors'],
      ['network.1.rx_bytes_sec', true, '/network/1/rx_bytes_sec'],
      ['network.1.bond_master', 0, '/network/1/bond_master'],
      ['raid', { md0: {} }, '/raid'],
      ['raid.0', 'md0', '/raid/0'],
      ['raid.0.degraded', 'no', '/raid/0/degraded'],
      ['raid.0.failed_disks', 'sdb', '/raid/0/failed_disks'],
      ['ipmi', [], '/ipmi'],
      ['ipmi.available', 'true', '/ipmi/available'],
      ['ipmi.ecc_errors.correctable', '3', '/ipmi/ecc_errors/correctable'],
      ['ipmi.sensors', {}, '/ipmi/sensors'],
      ['ipmi.sensors.5.value', '5600 RPM', '/ipmi/sensors/5/value'],
      ['ipmi.sel_entries_count', '212', '/ipmi/sel_entries_count'],
      ['os_alerts.oom_kills_recent', '0', '/os_alerts/oom_kills_recent'],
      ['thermal.max_cpu_celsius', '61', '/thermal/max_cpu_celsius'],
      ['thermal.cpu_readings.0.celsius', '58', '/thermal/cpu_readings/0/celsius'],
      ['dmi.is_virtual', 'no', '/dmi/is_virtual'],
      ['dmi.product_name', 2029, '/dmi/product_name'],
      ['gpu.devices', 'GPU-0', '/gpu/devices'],
      ['gpu.devices.0.temperature_c', 'hot', '/gpu/devices/0/temperature_c'],
      ['gpu.devices.0.throttle_reasons', 'sw_power_cap', '/gpu/devices/0/throttle_reasons'],
      ['security.firewall.active', 'yes', '/security/firewall/active'],
      ['security.pending_updates.pendingCount', '14', '/security/pending_updates/pendingCount'],
      ['security.kernel_vulns.0.mitigated', 'true', '/security/kernel_vulns/0/mitigated'],
      ['zfs.pools.0.state', 1, '/zfs/pools/0/state'],
      ['zfs.pools.0.scrub_errors', '0', '/zfs/pools/0/scrub_errors'],
      ['io_errors.count', '0', '/io_errors/count'],
      ['io_latency', {}, '/io_latency'],
      ['io_latency.0.read_iops', '14211', '/io_latency/0/read_iops'],
      ['conntrack.percent', '7%', '/conntrack/percent'],
      ['systemd.failed_count', '1', '/systemd/failed_count'],
      ['systemd.failed_units', 'nginx.service', '/systemd/failed_units'],
      ['ntp.synced', 'true', '/ntp/synced'],
      ['file_descriptors.percent', '0.09', '/file_descriptors/percent'],
      ['expected_reboot', 'yes', '/expected_reboot'],
      ['expected_reboot', 1, '/expected_reboot'],
    ];
    for (const [path, value, field] of cases) await expectRejected(t, withValue(base, path, value), field, path);
  });

  test('strings and lists are capped, so a hostile body cannot make processing expensive', async () => {
    const base = fixture('snapshot-vm-debian12.json');
    await expectRejected(t, withValue(base, 'system.hostname', 'h'.repeat(256)), '/system/hostname');
    await expectRejected(t, withValue(base, 'collector_version', '1'.repeat(65)), '/collector_version');
    await expectRejected(t, withValue(base, 'disks.0.options', 'o'.repeat(20_000)), '/disks/0/options');
    const core = base.cpu.cores[0];
    await expectRejected(t, withValue(base, 'cpu.cores', Array.from({ length: 4097 }, () => core)), '/cpu/cores');
    await expectRejected(t, withValue(base, 'network', Array.from({ length: 4097 }, () => null)), '/network');
    const r = await reporter(t);
    assert.equal((await push(t, r.key, withValue(base, 'cpu.cores', Array.from({ length: 4096 }, () => core)))).status, 200);
  });

  test('a rejected push stores nothing and does not close the gate', async () => {
    const r = await reporter(t);
    expectEnvelope(await push(t, r.key, { timestamp: '2026-11-22T12:00:00Z', system: { ip: 10 } }), 400, 'validation_failed');
    const ok = await push(t, r.key, minimalSnapshot());
    assert.equal(ok.status, 200, ok.raw);
    assert.equal(await sampleCount(t, r.server.id), 1);
  });
});
