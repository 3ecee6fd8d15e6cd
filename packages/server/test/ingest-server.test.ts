import assert from 'node:assert/strict';
import { test } from 'node:test';
import { api, describeEachStore } from './helpers/app.js';
import { fixture, fixtureText, getServer, latestRow, minimalSnapshot, pastGate, push, reporter, sampleCount, serverRow } from './helpers/ingest.js';
import { purger, trashServer } from './helpers/servers.js';

const AGENT_FIELDS = ['ip', 'os_type', 'os_version', 'collector_version', 'dmi_vendor', 'dmi_product', 'ipmi_sensors_count', 'disk_health_rollup'] as const;

describeEachStore('what a snapshot changes on its server', (t) => {
  test('the first reported hostname replaces a placeholder name and fills the hostname (RFC 1035, lowercased)', async () => {
    const r = await reporter(t);
    assert.equal((await push(t, r.key, minimalSnapshot({ system: { hostname: 'Web-07.Example.com' } }))).status, 200);
    let server = await getServer(t, r);
    assert.equal(server.name, 'Web-07.Example.com');
    assert.equal(server.hostname, 'web-07.example.com');
    assert.equal((await serverRow(t, r.server.id)).name_is_placeholder, 0);

    pastGate(t);
    assert.equal((await push(t, r.key, minimalSnapshot({ system: { hostname: 'renamed-host' } }))).status, 200);
    server = await getServer(t, r);
    assert.equal(server.name, 'Web-07.Example.com', 'only a placeholder is replaced, once');
    assert.equal(server.hostname, 'web-07.example.com', 'a hostname is never changed');
  });

  test('a name the user chose is kept; a missing hostname is still filled', async () => {
    const r = await reporter(t, { name: 'My database' });
    assert.equal((await push(t, r.key, minimalSnapshot({ system: { hostname: 'db-9.' } }))).status, 200);
    const server = await getServer(t, r);
    assert.equal(server.name, 'My database');
    assert.equal(server.hostname, 'db-9', 'a fully qualified trailing dot is dropped');
  });

  test('a placeholder renamed by the user before the first snapshot is the user\'s name', async () => {
    const r = await reporter(t);
    assert.equal((await api(t, 'PATCH', `/api/v1/servers/${r.server.id}`, { token: r.user.token, body: { name: 'chosen later' } })).status, 200);
    assert.equal((await push(t, r.key, minimalSnapshot({ system: { hostname: 'reported' } }))).status, 200);
    assert.equal((await getServer(t, r)).name, 'chosen later');
  });

  test('a hostname given at registration is never replaced', async () => {
    const r = await reporter(t, { hostname: 'registered.example.org' });
    assert.equal((await push(t, r.key, minimalSnapshot({ system: { hostname: 'other' } }))).status, 200);
    const server = await getServer(t, r);
    assert.equal(server.hostname, 'registered.example.org');
    assert.equal(server.name, 'other', 'the name was a placeholder');
  });

  test('a reported hostname that is no RFC 1035 name still names the server but fills no hostname', async () => {
    const r = await reporter(t);
    assert.equal((await push(t, r.key, minimalSnapshot({ system: { hostname: 'build_box_1' } }))).status, 200);
    const server = await getServer(t, r);
    assert.equal(server.name, 'build_box_1');
    assert.equal(server.hostname, null);
  });

  test('an unusable hostname (empty, control characters, over 100 characters, null) leaves the placeholder', async () => {
    for (const hostname of ['', '   ', 'tab\there', `h${'o'.repeat(100)}`, null]) {
      const r = await reporter(t);
      assert.equal((await push(t, r.key, minimalSnapshot({ system: { hostname } }))).status, 200);
      const server = await getServer(t, r);
      assert.equal(server.name, r.server.name, JSON.stringify(hostname));
      assert.equal(server.hostname, null);
      assert.equal((await serverRow(t, r.server.id)).name_is_placeholder, 1);
    }
  });

  test('absent blocks and null values leave what an earlier snapshot reported', async () => {
    const r = await reporter(t);
    assert.equal((await push(t, r.key, fixtureText('snapshot-baremetal.json'))).status, 200);
    const before = await getServer(t, r);
    pastGate(t);
    assert.equal((await push(t, r.key, minimalSnapshot())).status, 200);
    let after = await getServer(t, r);
    for (const field of AGENT_FIELDS) assert.deepEqual(after[field], before[field], `${field} after a bare snapshot`);
    assert.equal(after.last_seen_at, t.clock.now().toISOString(), 'last_seen_at always moves');

    pastGate(t);
    const nulls = minimalSnapshot({
      collector_version: null, system: { ip: null, os: null, os_id: null, hostname: null },
      dmi: { vendor: null, product_name: null }, ipmi: { sensors: null }, smart: null,
    });
    assert.equal((await push(t, r.key, nulls)).status, 200);
    after = await getServer(t, r);
    for (const field of AGENT_FIELDS) assert.deepEqual(after[field], before[field], `${field} after nulls`);
  });

  test('present values replace earlier ones; an empty SMART list is healthy; an empty sensor list counts 0', async () => {
    const r = await reporter(t);
    assert.equal((await push(t, r.key, fixtureText('snapshot-baremetal.json'))).status, 200);
    pastGate(t);
    const snapshot = minimalSnapshot({
      collector_version: '0.11.0',
      system: { ip: '198.51.100.24', os: 'Ubuntu 24.04.1 LTS', os_id: 'ubuntu' },
      dmi: { vendor: 'dell', product_name: 'PowerEdge R650' },
      ipmi: { available: false, sensors: [] },
      smart: [],
    });
    assert.equal((await push(t, r.key, snapshot)).status, 200);
    const server = await getServer(t, r);
    assert.equal(server.collector_version, '0.11.0');
    assert.equal(server.ip, '198.51.100.24');
    assert.equal(server.os_version, '24.04.1');
    assert.equal(server.dmi_vendor, 'dell');
    assert.equal(server.dmi_product, 'PowerEdge R650');
    assert.equal(server.ipmi_sensors_count, 0);
    assert.equal(server.disk_health_rollup, 'healthy');
  });

  test('disk_health_rollup follows the worst SMART drive of the latest snapshot', async () => {
    const r = await reporter(t);
    const cases: [unknown[], string][] = [
      [[{ device: '/dev/sda', health: 'PASSED', percentage_used: 10 }], 'healthy'],
      [[{ device: '/dev/sda', health: 'PASSED' }, { device: '/dev/nvme0n1', health: 'OK', percentage_used: 85 }], 'declining'],
      [[{ device: '/dev/sda', health: 'PASSED', pending_sectors: 2 }, { device: '/dev/sdb', health: 'PASSED', power_on_hours: 50_000 }], 'failing'],
      [[{ device: '/dev/sda', health: 'FAILED!' }, { device: '/dev/sdb', health: 'PASSED', reallocated_sectors: 9 }], 'broken'],
      [[{ device: '/dev/sda', health: '' }, { device: '/dev/sdb', health: null }], 'healthy'],
    ];
    for (const [smart, expected] of cases) {
      assert.equal((await push(t, r.key, minimalSnapshot({ smart }))).status, 200);
      assert.equal((await getServer(t, r)).disk_health_rollup, expected, JSON.stringify(smart));
      pastGate(t);
    }
  });
});

describeEachStore('hardware on GET /servers/:id', (t) => {
  test('null before the first snapshot, then cores, RAM, OS, kernel and architecture from the latest one', async () => {
    const r = await reporter(t);
    assert.equal((await getServer(t, r)).hardware, null);
    assert.equal((await push(t, r.key, fixtureText('snapshot-vm-debian12.json'))).status, 200);
    assert.deepEqual((await getServer(t, r)).hardware, { cpu_cores: 2, ram_mb: 24106, os: 'Debian GNU/Linux 12 (bookworm)', kernel: '6.18.44-fc-v595', architecture: null });
    pastGate(t);
    assert.equal((await push(t, r.key, minimalSnapshot({ system: { arch: 'aarch64', os: 'Alpine Linux v3.20' }, cpu: { cores: [] } }))).status, 200);
    assert.deepEqual((await getServer(t, r)).hardware, { cpu_cores: null, ram_mb: null, os: 'Alpine Linux v3.20', kernel: null, architecture: 'aarch64' });
    assert.equal((await getServer(t, r)).os_version, '3.20');
  });

  test('architecture prefers system.architecture over system.arch', async () => {
    const r = await reporter(t);
    assert.equal((await push(t, r.key, minimalSnapshot({ system: { architecture: 'x86_64', arch: 'amd64' } }))).status, 200);
    assert.equal((await getServer(t, r)).hardware.architecture, 'x86_64');
  });

  test('PATCH and restore answer the full server with its hardware; the list has none', async () => {
    const r = await reporter(t, { name: 'hw' });
    assert.equal((await push(t, r.key, fixtureText('snapshot-baremetal.json'))).status, 200);
    const patched = await api(t, 'PATCH', `/api/v1/servers/${r.server.id}`, { token: r.user.token, body: { tags: ['db'] } });
    assert.equal(patched.body.hardware.cpu_cores, 16);
    await trashServer(t, r.user.token, r.server.id);
    const restored = await api(t, 'POST', `/api/v1/servers/${r.server.id}/restore`, { token: r.user.token });
    assert.equal(restored.body.server.hardware.ram_mb, 257675);
    const list = await api(t, 'GET', '/api/v1/servers', { token: r.user.token });
    assert.equal(list.body.servers[0].hardware, undefined);
  });
});

describeEachStore('purge removes what ingest stored', (t) => {
  test('latest snapshot, samples and rollups of the purged server go; another server\'s stay', async () => {
    const { owner, key } = await purger(t);
    const doomed = await reporter(t, {}, owner);
    const kept = await reporter(t, {}, owner);
    for (const r of [doomed, kept]) assert.equal((await push(t, r.key, fixtureText('snapshot-baremetal.json'))).status, 200);
    pastGate(t);
    for (const r of [doomed, kept]) assert.equal((await push(t, r.key, fixture('snapshot-large-host.json'))).status, 200);
    assert.equal(await sampleCount(t, doomed.server.id), 2);

    // A rollup row of its own, whatever the history feature has written so far.
    await t.store.db.insertInto('metric_rollups')
      .values({ server_id: doomed.server.id, resolution: '1d', bucket: '2020-01-01T00:00:00.000Z', stats: '{}' }).execute();

    await trashServer(t, owner.token, doomed.server.id);
    assert.ok(await latestRow(t, doomed.server.id), 'trash keeps the data');
    assert.equal((await api(t, 'DELETE', `/api/v1/trashed-servers/${doomed.server.id}?confirm=true`, { token: key })).status, 200);

    const rollups = (id: string) => t.store.db.selectFrom('metric_rollups').select('bucket').where('server_id', '=', id).execute();
    assert.equal(await latestRow(t, doomed.server.id), undefined);
    assert.equal(await sampleCount(t, doomed.server.id), 0);
    assert.equal((await rollups(doomed.server.id)).length, 0);
    assert.ok(await latestRow(t, kept.server.id));
    assert.equal(await sampleCount(t, kept.server.id), 2);
  });
});
