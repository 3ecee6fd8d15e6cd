import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PROFILES } from '../../src/features/servers/rules.js';
import { ALERT_TYPES, RULES, evaluateRules, ruleByType } from '../../src/rules/catalog.js';
import { HOST_PROFILES, profilesSilencing, silencedTypes } from '../../src/rules/profiles.js';
import { input } from './support.js';

/**
 * The catalog (shared/design/alert-rules.md) transcribed: type, kind,
 * subject, default levels [info, warning, critical] and boot grace, in the
 * catalog's order. A rule that drifts from the design fails here.
 */
const CATALOG: Array<[type: string, kind: 'state' | 'event', subject: string | null, levels: [number?, number?, number?] | null, grace?: number]> = [
  ['cpu_high', 'state', null, [, 90, 98]],
  ['load_high', 'state', null, [, 1.5, 3]],
  ['cpu_iowait_high', 'state', null, [, 20]],
  ['ram_high', 'state', null, [, 5, 2]],
  ['swap_high', 'state', null, [, 50, 80]],
  ['oom_kills', 'event', null, null],
  ['zombie_processes', 'state', null, [, 50]],
  ['clock_drift', 'state', null, [, 5_000, 60_000], 300],
  ['ntp_not_synced', 'state', null, null, 300],
  ['fd_exhaustion', 'state', null, [, 80, 95]],
  ['conntrack_exhaustion', 'state', null, [, 80, 95]],
  ['systemd_service_failed', 'state', null, null],
  ['disk_space_high', 'state', 'mount', [, 85, 95]],
  ['inode_high', 'state', 'mount', [, 85, 95]],
  ['filesystem_readonly', 'state', 'mount', null],
  ['disk_latency_high', 'state', 'device', [, 50, 250]],
  ['disk_io_errors', 'state', null, null],
  ['smart_failing', 'state', 'device', null],
  ['nvme_wear_high', 'state', 'device', [75, 85, 95]],
  ['raid_degraded', 'state', 'device', null],
  ['zfs_pool_unhealthy', 'state', 'pool', null],
  ['zfs_scrub_errors', 'state', 'pool', null],
  ['interface_errors', 'state', 'interface', [, 10, 100], 120],
  ['link_speed_mismatch', 'state', 'interface', [, 1000]],
  ['interface_saturation', 'state', 'interface', [, 90]],
  ['bond_slave_down', 'state', 'interface', null, 60],
  ['cpu_temperature_high', 'state', null, [, 80, 90], 60],
  ['ecc_errors', 'state', null, [, 10], 120],
  ['ipmi_sensor_critical', 'state', 'sensor', null],
  ['ipmi_fan_failure', 'state', 'sensor', null, 60],
  ['psu_redundancy_loss', 'state', null, null],
  ['ipmi_sel_critical', 'event', null, null],
  ['ipmi_sel_full', 'state', null, [, 3_000]],
  ['cmos_battery_low', 'state', null, [, 2.6]],
  ['gpu_thermal_critical', 'state', 'gpu index', [, 85, 92], 300],
  ['gpu_power_cap_throttling', 'state', 'gpu index', null, 300],
  ['gpu_memory_exhausted', 'state', 'gpu index', [, 95], 300],
  ['ssh_root_password', 'state', null, null],
  ['no_firewall', 'state', null, null],
  ['pending_security_updates', 'state', null, [, 10]],
  ['kernel_vulnerabilities', 'state', null, null],
  ['kernel_needs_reboot', 'state', null, null],
  ['unattended_upgrades_disabled', 'state', null, null],
  ['unexpected_reboot', 'event', null, null],
  ['server_unreachable', 'state', null, null],
  ['agent_outdated', 'state', null, null],
];

describe('the rule catalog', () => {
  it('has every alert type of the design, in its order', () => {
    assert.deepEqual([...ALERT_TYPES], CATALOG.map(([type]) => type));
    assert.equal(new Set(ALERT_TYPES).size, ALERT_TYPES.length);
  });

  for (const [type, kind, subject, lv, grace] of CATALOG) {
    it(`${type}: ${kind}, subject ${subject ?? '–'}, levels ${lv ? JSON.stringify(lv) : 'none'}${grace ? `, ${grace} s boot grace` : ''}`, () => {
      const rule = ruleByType(type)!;
      assert.equal(rule.kind, kind);
      assert.equal(rule.subject, subject);
      assert.equal(rule.boot_grace_seconds, grace);
      if (lv === null) assert.equal(rule.thresholds, null);
      else assert.deepEqual([rule.thresholds?.info, rule.thresholds?.warning, rule.thresholds?.critical], [lv[0], lv[1], lv[2]]);
      if (rule.thresholds) assert.ok(rule.thresholds.unit, 'levels say what they measure');
      assert.ok(rule.description.length > 20 && rule.description.length < 300);
      assert.ok((rule.guidance ?? '').length > 40, 'a docs page needs something to tell the operator');
      assert.equal(typeof rule.evaluate, type === 'server_unreachable' ? 'undefined' : 'function');
    });
  }

  it('categories follow the sections of the design', () => {
    const counts: Record<string, number> = {};
    for (const rule of RULES) counts[rule.category] = (counts[rule.category] ?? 0) + 1;
    assert.deepEqual(counts, { host: 12, storage: 10, network: 4, hardware: 11, security: 6, lifecycle: 3 });
  });

  it('an unknown type has no rule (and the map is not an object with a prototype)', () => {
    for (const type of ['nope', '__proto__', 'constructor', 'toString', '']) assert.equal(ruleByType(type), undefined);
  });

  it('evaluateRules reports exactly the rules that looked at the snapshot', () => {
    const evaluation = evaluateRules(input({ cpu: { idle_percent: 1, load_1m: 0.1 } }));
    assert.deepEqual([...evaluation.evaluated].sort(), ['cpu_high', 'load_high'], 'no iowait in the snapshot: cpu_iowait_high did not look');
    assert.deepEqual(evaluation.findings.map((f) => [f.alert_type, f.severity]), [['cpu_high', 'critical']]);
  });
});

describe('host profiles', () => {
  it('marketplace_gpu silences exactly no_firewall, unattended_upgrades_disabled and gpu_power_cap_throttling', () => {
    assert.deepEqual([...silencedTypes('marketplace_gpu')].sort(), ['gpu_power_cap_throttling', 'no_firewall', 'unattended_upgrades_disabled']);
    assert.deepEqual(HOST_PROFILES.map((p) => [p.id, p.label]), [['marketplace_gpu', 'Marketplace GPU host']]);
  });

  it('no profile, or an unknown one, silences nothing', () => {
    assert.equal(silencedTypes(null).size, 0);
    assert.equal(silencedTypes('nope').size, 0);
    assert.equal(silencedTypes('__proto__').size, 0);
  });

  it('silences only types of the catalog, and the catalog lists who silences what', () => {
    for (const profile of HOST_PROFILES) for (const type of profile.silenced_alert_types) assert.ok(ruleByType(type), type);
    assert.deepEqual(profilesSilencing('no_firewall'), ['marketplace_gpu']);
    assert.deepEqual(profilesSilencing('disk_space_high'), []);
  });

  it('is the one list of profiles the server endpoints accept', () => {
    assert.deepEqual([...PROFILES], HOST_PROFILES.map((p) => p.id));
  });
});
