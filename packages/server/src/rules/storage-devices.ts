import { atOrAbove, defineRule, fmt, levelOf, levels, num, obj, objects, shellArg, text, texts, type Draft, type Obj } from './common.js';
import type { RuleDefinition, RuleInput } from './types.js';

/**
 * Storage devices: SMART drives, software RAID, ZFS pools. Part of the
 * storage section of the catalog. A list without a single named entry is
 * not evaluated: an empty list may mean the tool failed, and a failing
 * drive must not be resolved by a snapshot that could not see it.
 */

interface Named { key: string; item: Obj }

function named(list: unknown, ...keys: string[]): Named[] | null {
  const out: Named[] = [];
  for (const item of objects(list)) {
    const key = keys.map((k) => text(item[k])).find((v) => v !== null);
    if (key) out.push({ key, item });
  }
  return out.length > 0 ? out : null;
}

const drives = (input: RuleInput) => named(input.snapshot.smart, 'device', 'serial');

function pools(input: RuleInput): Named[] | null {
  const zfs = obj(input.snapshot.zfs);
  if (!zfs || zfs.available === false) return null;
  return named(zfs.pools, 'name');
}

const SMARTCTL = (device: string) => `smartctl -a ${shellArg(device, '<device>')}`;

export const DEVICE_RULES: RuleDefinition[] = [
  defineRule({
    alert_type: 'smart_failing', kind: 'state', category: 'storage', subject: 'device',
    description: 'A drive reports a failing SMART health, or has reallocated or pending sectors.',
    thresholds: null,
    guidance: 'Treat the drive as dying: check `smartctl -a <device>`, make sure backups are current, and replace it (in a RAID or ZFS pool, replace the member before a second drive fails). A long self-test (`smartctl -t long <device>`) confirms doubtful cases. A missing health value counts as unknown, not failing.',
    check(input) {
      const list = drives(input);
      if (!list) return null;
      const out: Draft[] = [];
      for (const { key, item } of list) {
        const health = text(item.health, 64)?.trim().toUpperCase() ?? '';
        const reallocated = num(item.reallocated_sectors);
        const pending = num(item.pending_sectors);
        const reasons: string[] = [];
        if (health !== '' && health !== 'PASSED' && health !== 'OK') reasons.push(`health ${health}`);
        if (reallocated !== null && reallocated > 0) reasons.push(`${fmt(reallocated, 0)} reallocated sectors`);
        if (pending !== null && pending > 0) reasons.push(`${fmt(pending, 0)} pending sectors`);
        if (reasons.length === 0) continue;
        const model = text(item.model);
        out.push({
          subject: key, severity: 'critical',
          title: `Drive ${key} is failing (SMART)`,
          message: `${key}${model ? ` (${model})` : ''}: ${reasons.join(', ')}.`,
          evidence: { device: key, model, serial: text(item.serial, 64), health: health || null, reallocated_sectors: reallocated, pending_sectors: pending },
          recommendation: `Run \`${SMARTCTL(key)}\`; make sure backups are current and replace the drive (in RAID or ZFS, replace the member now).`,
        });
      }
      return out;
    },
  }),
  defineRule({
    alert_type: 'nvme_wear_high', kind: 'state', category: 'storage', subject: 'device',
    description: 'A flash drive has used up much of its rated write endurance (SMART percentage_used).',
    thresholds: { info: 75, warning: 85, critical: 95, unit: 'percent of rated endurance used' },
    guidance: 'Plan the replacement: wear only grows. Check `smartctl -a <device>` (or `nvme smart-log <device>`) for Percentage Used and the write rate, and order a spare before it reaches 100 %.',
    check(input) {
      const list = drives(input);
      if (!list) return null;
      const lv = levels(input, 'nvme_wear_high', { info: 75, warning: 85, critical: 95 });
      const out: Draft[] = [];
      for (const { key, item } of list) {
        const used = num(item.percentage_used);
        const severity = used === null ? null : atOrAbove(used, lv);
        if (!severity || used === null) continue;
        out.push({
          subject: key, severity,
          title: `Drive ${key} wear at ${fmt(used, 0)}%`,
          message: `${key} has used ${fmt(used, 0)}% of its rated write endurance; the ${severity} level is ${levelOf(severity, lv)}%.`,
          evidence: { device: key, model: text(item.model), percentage_used: used, power_on_hours: num(item.power_on_hours), threshold: levelOf(severity, lv) },
          recommendation: `Run \`${SMARTCTL(key)}\` to confirm, and plan the replacement before it reaches 100%.`,
        });
      }
      return out;
    },
  }),
  defineRule({
    alert_type: 'raid_degraded', kind: 'state', category: 'storage', subject: 'device',
    description: 'A software RAID array is degraded or has failed members.',
    thresholds: null,
    guidance: 'The array runs without redundancy: one more failure loses data. Check `cat /proc/mdstat` and `mdadm --detail <array>`, replace the failed disk, add it back (`mdadm --manage <array> --add <disk>`) and watch the rebuild.',
    check(input) {
      const list = named(input.snapshot.raid, 'device', 'name');
      if (!list) return null;
      const out: Draft[] = [];
      for (const { key, item } of list) {
        const failed = texts(item.failed_disks);
        const state = text(item.state, 64);
        const degraded = item.degraded === true || /degraded/i.test(state ?? '');
        if (!degraded && failed.length === 0) continue;
        const active = num(item.active_disks);
        const total = num(item.total_disks);
        out.push({
          subject: key, severity: 'critical',
          title: `RAID ${key} is degraded`,
          message: `${key}${text(item.level, 32) ? ` (${text(item.level, 32)})` : ''} is ${state ?? 'degraded'}${active !== null && total !== null ? `, ${fmt(active, 0)} of ${fmt(total, 0)} disks active` : ''}${failed.length ? `; failed: ${failed.join(', ')}` : ''}.`,
          evidence: { device: key, level: text(item.level, 32), state, degraded: item.degraded === true, active_disks: active, total_disks: total, failed_disks: failed },
          recommendation: `Run \`cat /proc/mdstat\` and \`mdadm --detail ${shellArg(key, '<array>')}\`; replace the failed disk and add it back with \`mdadm --manage ${shellArg(key, '<array>')} --add <disk>\`.`,
        });
      }
      return out;
    },
  }),
  defineRule({
    alert_type: 'zfs_pool_unhealthy', kind: 'state', category: 'storage', subject: 'pool',
    description: 'A ZFS pool is not ONLINE: DEGRADED (warning) or FAULTED, UNAVAIL, SUSPENDED and the like (critical).',
    thresholds: null,
    guidance: 'Run `zpool status -x <pool>` to see which device is at fault; replace it with `zpool replace <pool> <old> <new>` and let it resilver. A SUSPENDED or FAULTED pool has stopped serving I/O: act now.',
    check(input) {
      const list = pools(input);
      if (!list) return null;
      const out: Draft[] = [];
      for (const { key, item } of list) {
        const state = text(item.state, 64)?.trim().toUpperCase();
        if (!state || state === 'ONLINE') continue;
        const severity = state === 'DEGRADED' ? 'warning' : 'critical';
        const errors = { read_errors: num(item.read_errors), write_errors: num(item.write_errors), checksum_errors: num(item.checksum_errors) };
        out.push({
          subject: key, severity,
          title: `ZFS pool ${key} is ${state}`,
          message: `Pool ${key} is ${state}.`,
          evidence: { pool: key, state, ...errors },
          recommendation: `Run \`zpool status -x ${shellArg(key, '<pool>')}\`; replace the faulted device with \`zpool replace ${shellArg(key, '<pool>')} <old> <new>\` and watch the resilver.`,
        });
      }
      return out;
    },
  }),
  defineRule({
    alert_type: 'zfs_scrub_errors', kind: 'state', category: 'storage', subject: 'pool',
    description: 'The last scrub of a ZFS pool found errors (warning), or the pool has never been scrubbed (info).',
    thresholds: null,
    guidance: 'Scrub errors mean data did not match its checksum. `zpool status -v <pool>` lists damaged files: restore them from backup, `zpool clear <pool>`, and scrub again (`zpool scrub <pool>`). Schedule a monthly scrub on every pool.',
    check(input) {
      const list = pools(input);
      if (!list) return null;
      const out: Draft[] = [];
      for (const { key, item } of list) {
        const errors = num(item.scrub_errors);
        const scrubState = text(item.scrub_state, 64);
        const arg = shellArg(key, '<pool>');
        if (errors !== null && errors > 0) {
          out.push({
            subject: key, severity: 'warning',
            title: `ZFS pool ${key}: ${fmt(errors, 0)} scrub error${errors === 1 ? '' : 's'}`,
            message: `The last scrub of ${key} found ${fmt(errors, 0)} error${errors === 1 ? '' : 's'}.`,
            evidence: { pool: key, scrub_errors: errors, scrub_state: scrubState, last_scrub: text(item.last_scrub, 64) },
            recommendation: `Run \`zpool status -v ${arg}\` to list damaged files, restore them from backup, then \`zpool clear ${arg}\` and \`zpool scrub ${arg}\`.`,
          });
        } else if (item.scrub_never_run === true || /^(none|never)/i.test(scrubState ?? '')) {
          out.push({
            subject: key, severity: 'info',
            title: `ZFS pool ${key} has never been scrubbed`,
            message: `No scrub has ever run on ${key}, so silent corruption would go unnoticed.`,
            evidence: { pool: key, scrub_state: scrubState, last_scrub: null },
            recommendation: `Run \`zpool scrub ${arg}\` and schedule one monthly (most distributions ship a zfs scrub timer or cron job).`,
          });
        }
      }
      return out;
    },
  }),
];
