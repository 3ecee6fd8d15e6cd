import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { absentAndNull, evaluate, graceCases, input, table } from './support.js';

const busy = (percent: number) => ({ cpu: { idle_percent: 100 - percent, load_1m: 0.5 } });
const cores = (n: number) => Array.from({ length: n }, (_, core) => ({ core, idle_percent: 50 }));

describe('cpu_high: 100 − idle ≥ 90 warning, ≥ 98 critical', () => {
  table('cpu_high', [
    ['busy 89.9', busy(89.9), 'clear'],
    ['busy 90', busy(90), 'warning'],
    ['busy 90.1', busy(90.1), 'warning'],
    ['busy 97.9', busy(97.9), 'warning'],
    ['busy 98', busy(98), 'critical'],
    ['busy 100', busy(100), 'critical'],
    ...absentAndNull('cpu'),
    ['idle_percent null', { cpu: { idle_percent: null } }, 'skip'],
    ['override warning 95: busy 92', busy(92), 'clear', { thresholds: { cpu_high: { warning: 95 } } }],
    ['override critical 92: busy 92', busy(92), 'critical', { thresholds: { cpu_high: { critical: 92 } } }],
    ['an override of another type changes nothing', busy(92), 'warning', { thresholds: { load_high: { warning: 99 } } }],
  ]);
});

describe('load_high: load_1m ≥ 1.5 × cores warning, ≥ 3 × cores critical', () => {
  const load = (value: number, n: number | null = 4) => ({ cpu: { load_1m: value, ...(n === null ? {} : { cores: cores(n) }) } });
  table('load_high', [
    ['4 cores, load 5.99', load(5.99), 'clear'],
    ['4 cores, load 6', load(6), 'warning'],
    ['4 cores, load 11.99', load(11.99), 'warning'],
    ['4 cores, load 12', load(12), 'critical'],
    ['no cores list: 1 core, load 1.49', load(1.49, null), 'clear'],
    ['no cores list: 1 core, load 1.5', load(1.5, null), 'warning'],
    ['empty cores list: 1 core, load 3', load(3, 0), 'critical'],
    ['cores [null, null] still counts 2 cores, load 3', { cpu: { load_1m: 3, cores: [null, null] } }, 'warning'],
    ...absentAndNull('cpu'),
    ['load_1m null', { cpu: { load_1m: null, cores: cores(4) } }, 'skip'],
    ['override warning 2 per core: load 6 on 4 cores', load(6), 'clear', { thresholds: { load_high: { warning: 2 } } }],
  ]);
});

describe('cpu_iowait_high: iowait ≥ 20 % with load_1m ≥ 1', () => {
  const io = (iowait: number | null, load: number | null) => ({ cpu: { iowait_percent: iowait, load_1m: load } });
  table('cpu_iowait_high', [
    ['iowait 19.9, load 2', io(19.9, 2), 'clear'],
    ['iowait 20, load 2', io(20, 2), 'warning'],
    ['iowait 60, load 2', io(60, 2), 'warning'],
    ['iowait 20, load 0.99: nothing queued', io(20, 0.99), 'clear'],
    ['iowait 20, load 1', io(20, 1), 'warning'],
    ...absentAndNull('cpu'),
    ['load_1m null', io(30, null), 'skip'],
    ['iowait null', io(null, 3), 'skip'],
    ['override warning 30: iowait 25', io(25, 2), 'clear', { thresholds: { cpu_iowait_high: { warning: 30 } } }],
  ]);
});

describe('ram_high: available < 5 % warning, < 2 % critical; without available_mb, used ≥ 90 / 95 %', () => {
  const mem = (available: number | null, used: number | null = 500, total: number | null = 1000) => ({ memory: { total_mb: total, available_mb: available, used_mb: used } });
  table('ram_high', [
    ['available 5.01 %', mem(50.1), 'clear'],
    ['available 5 % (not below)', mem(50), 'clear'],
    ['available 4.99 %', mem(49.9), 'warning'],
    ['available 2 %', mem(20), 'warning'],
    ['available 1.99 %', mem(19.9), 'critical'],
    ['available 0', mem(0), 'critical'],
    ['no available_mb: used 89.9 %', mem(null, 899), 'clear'],
    ['no available_mb: used 90 %', mem(null, 900), 'warning'],
    ['no available_mb: used 94.9 %', mem(null, 949), 'warning'],
    ['no available_mb: used 95 %', mem(null, 950), 'critical'],
    ['available is preferred over used', mem(400, 990), 'clear'],
    ...absentAndNull('memory'),
    ['total null', mem(10, 990, null), 'skip'],
    ['total 0', mem(0, 0, 0), 'skip'],
    ['neither available nor used', mem(null, null), 'skip'],
    ['override warning 10: available 8 %', mem(80), 'warning', { thresholds: { ram_high: { warning: 10 } } }],
    ['override critical 1: available 1.5 %', mem(15), 'warning', { thresholds: { ram_high: { critical: 1 } } }],
  ]);
});

describe('swap_high: used ≥ 50 % of swap warning, ≥ 80 % critical', () => {
  const swap = (used: number | null, total: number | null = 1000) => ({ memory: { swap_total_mb: total, swap_used_mb: used } });
  table('swap_high', [
    ['49.9 %', swap(499), 'clear'],
    ['50 %', swap(500), 'warning'],
    ['79.9 %', swap(799), 'warning'],
    ['80 %', swap(800), 'critical'],
    ['no swap configured (total 0)', swap(0, 0), 'clear'],
    ...absentAndNull('memory'),
    ['swap_used null', swap(null), 'skip'],
    ['swap_total null', swap(10, null), 'skip'],
    ['override critical 60: 60 %', swap(600), 'critical', { thresholds: { swap_high: { critical: 60 } } }],
  ]);
});

describe('oom_kills (event): oom_kills_recent > 0 is critical', () => {
  const oom = (n: number | null) => ({ os_alerts: { oom_kills_recent: n } });
  table('oom_kills', [
    ['0 kills', oom(0), 'clear'],
    ['1 kill', oom(1), 'critical'],
    ['7 kills', oom(7), 'critical'],
    ...absentAndNull('os_alerts'),
    ['oom_kills_recent null', oom(null), 'skip'],
    ['no numeric level: an override is ignored', oom(1), 'critical', { thresholds: { oom_kills: { critical: 5 } } }],
  ]);
});

describe('zombie_processes: ≥ 50 warning', () => {
  const zombies = (n: number | null) => ({ os_alerts: { zombie_processes: n } });
  table('zombie_processes', [
    ['49', zombies(49), 'clear'],
    ['50', zombies(50), 'warning'],
    ['51', zombies(51), 'warning'],
    ...absentAndNull('os_alerts'),
    ['zombie_processes null', zombies(null), 'skip'],
    ['override warning 100: 60 zombies', zombies(60), 'clear', { thresholds: { zombie_processes: { warning: 100 } } }],
  ]);
});

describe('clock_drift: |time_drift_ms| ≥ 5,000 warning, ≥ 60,000 critical; 300 s boot grace', () => {
  const drift = (ms: number | null) => ({ os_alerts: { time_drift_ms: ms } });
  table('clock_drift', [
    ['4,999 ms', drift(4_999), 'clear'],
    ['5,000 ms', drift(5_000), 'warning'],
    ['−5,000 ms (behind counts the same)', drift(-5_000), 'warning'],
    ['59,999 ms', drift(59_999), 'warning'],
    ['60,000 ms', drift(60_000), 'critical'],
    ['−60,001 ms', drift(-60_001), 'critical'],
    ...absentAndNull('os_alerts'),
    ['time_drift_ms null', drift(null), 'skip'],
    ...graceCases(300, drift(70_000), 'critical'),
    ['override warning 1,000: 2,000 ms', drift(2_000), 'warning', { thresholds: { clock_drift: { warning: 1_000 } } }],
  ]);
});

describe('ntp_not_synced: ntp.synced false; 300 s boot grace', () => {
  table('ntp_not_synced', [
    ['synced', { ntp: { synced: true } }, 'clear'],
    ['not synced', { ntp: { synced: false, daemon_running: false } }, 'warning'],
    ['synced null', { ntp: { synced: null } }, 'skip'],
    ...absentAndNull('ntp'),
    ...graceCases(300, { ntp: { synced: false } }, 'warning'),
  ]);
});

describe('fd_exhaustion and conntrack_exhaustion: percent ≥ 80 warning, ≥ 95 critical', () => {
  for (const [type, block] of [['fd_exhaustion', 'file_descriptors'], ['conntrack_exhaustion', 'conntrack']] as const) {
    describe(type, () => {
      const at = (percent: number | null, extra: Record<string, unknown> = {}) => ({ [block]: { percent, ...extra } });
      table(type, [
        ['79.9 %', at(79.9), 'clear'],
        ['80 %', at(80), 'warning'],
        ['94.9 %', at(94.9), 'warning'],
        ['95 %', at(95), 'critical'],
        ['percent missing: computed from the counts (900 of 1000)', at(null, { allocated: 900, count: 900, max: 1000 }), 'warning'],
        ['percent and counts missing', at(null), 'skip'],
        ...absentAndNull(block),
        ['override critical 85: 90 %', at(90), 'critical', { thresholds: { [type]: { critical: 85 } } }],
      ]);
    });
  }
  table('conntrack_exhaustion', [['conntrack not available on this host', { conntrack: { available: false, percent: 99 } }, 'skip']]);
});

describe('systemd_service_failed: failed_count > 0, units in evidence', () => {
  table('systemd_service_failed', [
    ['none failed', { systemd: { failed_count: 0, failed_units: [] } }, 'clear'],
    ['one failed', { systemd: { failed_count: 1, failed_units: ['nginx.service'] } }, 'warning'],
    ['count missing, units listed', { systemd: { failed_units: ['a.service', 'b.service'] } }, 'warning'],
    ['count and units null', { systemd: { failed_count: null, failed_units: null } }, 'skip'],
    ...absentAndNull('systemd'),
  ]);

  it('lists the units, by name or from objects naming them, capped', () => {
    const units = ['nginx.service', { unit: 'backup.timer' }, null, 42, ...Array.from({ length: 40 }, (_, i) => `u${i}.service`)];
    const [f] = evaluate('systemd_service_failed', input({ systemd: { failed_count: 42, failed_units: units } }))!;
    assert.equal(f!.title, '42 failed systemd units');
    assert.deepEqual((f!.evidence.failed_units as string[]).slice(0, 3), ['nginx.service', 'backup.timer', 'u0.service']);
    assert.equal((f!.evidence.failed_units as string[]).length, 20);
    assert.match(f!.recommendation, /systemctl --failed/);
  });
});

describe('host finding texts', () => {
  it('cpu_high names the numbers and the level', () => {
    const [f] = evaluate('cpu_high', input(busy(93.5)))!;
    assert.equal(f!.title, 'CPU is 93.5% busy');
    assert.deepEqual(f!.evidence, { busy_percent: 93.5, idle_percent: 6.5, threshold: 90 });
    assert.match(f!.recommendation, /top -o %CPU/);
  });

  it('load_high reports per-core load against the overridden level', () => {
    const [f] = evaluate('load_high', input({ cpu: { load_1m: 20, cores: cores(8) } }, { thresholds: { load_high: { warning: 2, critical: 4 } } }))!;
    assert.equal(f!.severity, 'warning');
    assert.deepEqual(f!.evidence, { load_1m: 20, cores: 8, per_core: 2.5, threshold_per_core: 2 });
  });
});
