import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { diskHealthRollup, driveHealth, type DiskHealth, type SmartDriveHealthInput } from '../src/features/ingest/disk-health.js';
import { hostnameFacts, osFacts, serverFacts } from '../src/features/ingest/server-facts.js';
import { fixture } from './helpers/ingest.js';

describe('disk health of one SMART drive', () => {
  const cases: [SmartDriveHealthInput, DiskHealth, string][] = [
    [{ health: 'PASSED' }, 'healthy', 'PASSED'],
    [{ health: 'OK' }, 'healthy', 'OK (SAS)'],
    [{ health: 'passed' }, 'healthy', 'case does not matter'],
    [{ health: ' PASSED ' }, 'healthy', 'surrounding spaces'],
    [{}, 'healthy', 'no health at all: unknown, not broken'],
    [{ health: '' }, 'healthy', 'empty health: unknown'],
    [{ health: '   ' }, 'healthy', 'blank health: unknown'],
    [{ health: null }, 'healthy', 'null health: unknown'],
    [{ health: 'FAILED' }, 'broken', 'FAILED'],
    [{ health: 'UNKNOWN' }, 'broken', 'any other reported health'],
    [{ health: 'FAILED', percentage_used: 0 }, 'broken', 'broken outranks everything'],
    [{ health: 'PASSED', reallocated_sectors: 1 }, 'failing', 'one reallocated sector'],
    [{ health: 'PASSED', pending_sectors: 1 }, 'failing', 'one pending sector'],
    [{ health: 'PASSED', reallocated_sectors: 0, pending_sectors: 0 }, 'healthy', 'zero sectors'],
    [{ percentage_used: 95 }, 'failing', 'wear at 95'],
    [{ percentage_used: 120 }, 'failing', 'wear past 100 (NVMe may report it)'],
    [{ percentage_used: 94.9 }, 'declining', 'wear just under 95'],
    [{ percentage_used: 80 }, 'declining', 'wear at 80'],
    [{ percentage_used: 79.9 }, 'healthy', 'wear just under 80'],
    [{ power_on_hours: 40_000 }, 'healthy', '40,000 hours is not more than 40,000'],
    [{ power_on_hours: 40_001 }, 'declining', 'past 40,000 hours'],
    [{ power_on_hours: 90_000, pending_sectors: 3 }, 'failing', 'failing outranks declining'],
    [{ reallocated_sectors: null, pending_sectors: null, percentage_used: null, power_on_hours: null }, 'healthy', 'all unknown'],
    [{ percentage_used: Number.POSITIVE_INFINITY }, 'healthy', 'a non-finite number is unknown'],
  ];
  for (const [drive, expected, label] of cases) {
    test(`${label} → ${expected}`, () => assert.equal(driveHealth(drive), expected));
  }
});

describe('disk_health_rollup over drives', () => {
  const cases: [Array<SmartDriveHealthInput | null>, DiskHealth][] = [
    [[], 'healthy'],
    [[null], 'healthy'],
    [[{ health: 'PASSED' }, { health: 'PASSED', percentage_used: 81 }], 'declining'],
    [[{ health: 'PASSED', power_on_hours: 50_000 }, { health: 'PASSED', pending_sectors: 1 }, { health: 'PASSED' }], 'failing'],
    [[{ health: 'PASSED', pending_sectors: 1 }, { health: 'FAILED' }, { health: 'PASSED', percentage_used: 90 }], 'broken'],
    [[null, { health: '' }, { health: 'OK' }], 'healthy'],
  ];
  for (const [drives, expected] of cases) {
    test(`${JSON.stringify(drives)} → ${expected}`, () => assert.equal(diskHealthRollup(drives), expected));
  }

  test('the fixtures', () => {
    assert.equal(diskHealthRollup(fixture('snapshot-vm-debian12.json').smart), 'healthy');
    assert.equal(diskHealthRollup(fixture('snapshot-baremetal.json').smart), 'declining');
    assert.equal(diskHealthRollup(fixture('snapshot-large-host.json').smart), 'healthy');
  });
});

describe('os_type and os_version from system.os_id and system.os', () => {
  const cases: [Record<string, unknown>, { os_type?: string; os_version?: string }][] = [
    [{ os_id: 'debian', os: 'Debian GNU/Linux 12 (bookworm)' }, { os_type: 'debian', os_version: '12' }],
    [{ os_id: 'ubuntu', os: 'Ubuntu 22.04.4 LTS' }, { os_type: 'ubuntu', os_version: '22.04.4' }],
    [{ os_id: 'rhel', os: 'Red Hat Enterprise Linux 9.4 (Plow)' }, { os_type: 'rhel', os_version: '9.4' }],
    [{ os_id: 'alpine', os: 'Alpine Linux v3.20' }, { os_type: 'alpine', os_version: '3.20' }],
    [{ os_id: 'arch', os: 'Arch Linux' }, { os_type: 'arch' }],
    [{ os_id: 'Fedora', os: 'Fedora Linux 40 (Server Edition)' }, { os_type: 'fedora', os_version: '40' }],
    [{ os_id: 'debian', os: 'Debian GNU/Linux 12', os_version: '12.8' }, { os_type: 'debian', os_version: '12.8' }],
    [{ os: 'Ubuntu 24.04 LTS' }, { os_version: '24.04' }],
    [{ os_id: 'not an id!', os: null }, {}],
    [{ os_id: null, os: '' }, {}],
    [{}, {}],
  ];
  for (const [system, expected] of cases) {
    test(JSON.stringify(system), () => assert.deepEqual(osFacts(system), expected));
  }
});

describe('the reported hostname as name and hostname', () => {
  const cases: [unknown, { name?: string; hostname?: string }][] = [
    ['vm', { name: 'vm', hostname: 'vm' }],
    ['DB-01.Example.COM', { name: 'DB-01.Example.COM', hostname: 'db-01.example.com' }],
    ['db-01.example.com.', { name: 'db-01.example.com.', hostname: 'db-01.example.com' }],
    ['  spaced  ', { name: 'spaced', hostname: 'spaced' }],
    ['my_box', { name: 'my_box' }],
    ['1st-box', { name: '1st-box' }],
    ['x'.repeat(100), { name: 'x'.repeat(100) }],
    [['a'.repeat(50), 'b'.repeat(50), 'c'.repeat(50)].join('.'), { hostname: ['a'.repeat(50), 'b'.repeat(50), 'c'.repeat(50)].join('.') }],
    ['x'.repeat(101), {}],
    ['', {}],
    ['bad\nname', {}],
    [null, {}],
    [undefined, {}],
  ];
  for (const [reported, expected] of cases) {
    test(JSON.stringify(reported)?.slice(0, 40) ?? 'undefined', () => assert.deepEqual(hostnameFacts(reported), expected));
  }
});

describe('serverFacts of a whole snapshot', () => {
  test('the real agent\'s VM snapshot', () => {
    assert.deepEqual(serverFacts(fixture('snapshot-vm-debian12.json')), {
      os_type: 'debian', os_version: '12', name: 'vm', hostname: 'vm', ip: '192.0.2.2', collector_version: '0.10.1',
      dmi_vendor: 'generic', ipmi_sensors_count: 0, disk_health_rollup: 'healthy',
    });
  });

  test('absent blocks yield no facts', () => {
    assert.deepEqual(serverFacts({ timestamp: '2026-11-22T12:00:00Z', system: {} }), {});
    assert.deepEqual(serverFacts({ timestamp: '2026-11-22T12:00:00Z', system: {}, dmi: null, ipmi: { available: false }, smart: null }), {});
  });
});
