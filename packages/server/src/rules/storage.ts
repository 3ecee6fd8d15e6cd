import { atOrAbove, defineRule, fmt, levelOf, levels, num, obj, objects, pct, shellArg, text, texts, type Draft, type Obj } from './common.js';
import { DEVICE_RULES } from './storage-devices.js';
import type { RuleDefinition, RuleInput } from './types.js';

/** Storage: filesystems (space, inodes, read-only), device latency and I/O errors; drives and arrays in storage-devices.ts. */

/** Read-only by design and always "full": an alert on them could never be fixed. */
const READ_ONLY_FS = new Set(['squashfs', 'iso9660', 'erofs']);
/** Pseudo and firmware filesystems whose inode counts mean nothing to an operator (catalog skip-list). */
const INODE_SKIP = ['/proc', '/sys', '/dev', '/run', '/snap', '/boot/efi'];

interface Mount { mount: string; device: string | null; fstype: string | null; disk: Obj }

/**
 * The mounts of the snapshot, or null when it lists none: every Linux host
 * has a root filesystem, so an empty list means the agent could not read
 * them, which says nothing about their health.
 */
function mounts(input: RuleInput): Mount[] | null {
  const out: Mount[] = [];
  for (const disk of objects(input.snapshot.disks)) {
    const mount = text(disk.mount);
    if (mount === null) continue;
    const fstype = text(disk.fstype, 64)?.toLowerCase() ?? null;
    if (fstype !== null && READ_ONLY_FS.has(fstype)) continue;
    out.push({ mount, device: text(disk.device), fstype, disk });
  }
  return out.length > 0 ? out : null;
}

const under = (mount: string, prefix: string) => mount === prefix || mount.startsWith(`${prefix}/`);

function usedPercent(disk: Obj): number | null {
  const given = num(disk.percent_used);
  if (given !== null) return given;
  const used = num(disk.used_gb);
  const total = num(disk.total_gb);
  return used !== null && total !== null && total > 0 ? pct(used, total) : null;
}

const isNvme = (device: string) => /nvme/i.test(device);

interface Latency { device: string; ms: number; measure: 'p99' | 'average' }

/**
 * Per device, the p99 latency the disks list carries; agents that report no
 * p99 send `io_latency` averages instead, which are used with the same levels:
 * an average is never above the p99, so this can miss a spike but never
 * raise a false alarm.
 */
function latencies(input: RuleInput): Latency[] {
  const out: Latency[] = [];
  for (const disk of objects(input.snapshot.disks)) {
    const device = text(disk.device) ?? text(disk.mount);
    const ms = num(disk.latency_p99_ms);
    if (device !== null && ms !== null) out.push({ device, ms, measure: 'p99' });
  }
  if (out.length > 0) return out;
  for (const entry of objects(input.snapshot.io_latency)) {
    const name = text(entry.device);
    const read = num(entry.avg_read_latency_ms);
    const write = num(entry.avg_write_latency_ms);
    if (name === null || (read === null && write === null)) continue;
    out.push({ device: name.includes('/') ? name : `/dev/${name}`, ms: Math.max(read ?? 0, write ?? 0), measure: 'average' });
  }
  return out;
}

export const STORAGE_RULES: RuleDefinition[] = [
  defineRule({
    alert_type: 'disk_space_high', kind: 'state', category: 'storage', subject: 'mount',
    description: 'A filesystem is nearly full; writes fail when it is.',
    thresholds: { warning: 85, critical: 95, unit: 'percent used' },
    guidance: 'Find what grew with `df -h` and `du -xh --max-depth=1 <mount> | sort -h | tail`. Usual suspects: logs (`journalctl --vacuum-size=500M`, logrotate), package caches (`apt-get clean`, `dnf clean all`), old kernels, container images (`docker system df`), core dumps. Grow the volume if the data is legitimate.',
    check(input) {
      const list = mounts(input);
      if (!list) return null;
      const lv = levels(input, 'disk_space_high', { warning: 85, critical: 95 });
      const out: Draft[] = [];
      for (const m of list) {
        const used = usedPercent(m.disk);
        const severity = used === null ? null : atOrAbove(used, lv);
        if (!severity || used === null) continue;
        const free = num(m.disk.available_gb);
        const arg = shellArg(m.mount, '<mount>');
        out.push({
          subject: m.mount, severity,
          title: `Disk ${m.mount} is ${fmt(used, 0)}% full`,
          message: `${m.mount}${m.device ? ` (${m.device})` : ''} is ${fmt(used)}% used${free !== null ? `, ${fmt(free)} GB free` : ''}; the ${severity} level is ${levelOf(severity, lv)}%.`,
          evidence: { mount: m.mount, device: m.device, percent_used: used, available_gb: free, total_gb: num(m.disk.total_gb), threshold: levelOf(severity, lv) },
          recommendation: `Run \`df -h ${arg}\` and \`du -xh --max-depth=1 ${arg} | sort -h | tail -20\` to find what grew; clear old logs (\`journalctl --vacuum-size=500M\`), package caches and old releases, or grow the filesystem.`,
        });
      }
      return out;
    },
  }),
  defineRule({
    alert_type: 'inode_high', kind: 'state', category: 'storage', subject: 'mount',
    description: 'A filesystem is running out of inodes: no new files can be created even with free space.',
    thresholds: { warning: 85, critical: 95, unit: 'percent of inodes used' },
    guidance: 'Many small files exhaust inodes (session files, mail queues, caches). Find the directory with `du --inodes -x --max-depth=2 <mount> | sort -n | tail` and clean it up. Pseudo filesystems (/proc, /sys, /dev, /run, /snap, /boot/efi) are not checked.',
    check(input) {
      const list = mounts(input);
      if (!list) return null;
      const lv = levels(input, 'inode_high', { warning: 85, critical: 95 });
      const out: Draft[] = [];
      for (const m of list) {
        if (INODE_SKIP.some((prefix) => under(m.mount, prefix))) continue;
        const total = num(m.disk.inodes_total);
        const free = num(m.disk.inodes_free);
        const used = num(m.disk.inodes_used) ?? (total !== null && free !== null ? total - free : null);
        // Filesystems without a fixed inode table (vfat, some network filesystems) report 0 inodes.
        if (total === null || total <= 0 || used === null) continue;
        const usedPct = pct(used, total);
        const severity = atOrAbove(usedPct, lv);
        if (!severity) continue;
        out.push({
          subject: m.mount, severity,
          title: `Inodes on ${m.mount} are ${fmt(usedPct, 0)}% used`,
          message: `${fmt(used, 0)} of ${fmt(total, 0)} inodes used on ${m.mount} (${fmt(usedPct)}%); the ${severity} level is ${levelOf(severity, lv)}%.`,
          evidence: { mount: m.mount, inodes_used: used, inodes_total: total, percent_used: usedPct, threshold: levelOf(severity, lv) },
          recommendation: `Run \`df -i ${shellArg(m.mount, '<mount>')}\` and \`du --inodes -x --max-depth=2 ${shellArg(m.mount, '<mount>')} | sort -n | tail -20\` to find the directory with many small files, then delete or archive them.`,
        });
      }
      return out;
    },
  }),
  defineRule({
    alert_type: 'filesystem_readonly', kind: 'state', category: 'storage', subject: 'mount',
    description: 'A filesystem on a block device is mounted read-only, usually because the kernel remounted it after I/O errors.',
    thresholds: null,
    guidance: 'The kernel remounts a filesystem read-only when it meets errors. Read `dmesg -T | grep -iE "error|remount"`, check the drive (`smartctl -a <device>`), repair with `fsck` on the unmounted filesystem, then `mount -o remount,rw <mount>`. squashfs, iso9660 and erofs are read-only by design and not checked.',
    check(input) {
      const list = mounts(input);
      if (!list) return null;
      const out: Draft[] = [];
      for (const m of list) {
        const options = text(m.disk.options, 4096);
        if (options === null || !m.device?.startsWith('/dev/')) continue;
        if (options.split(',')[0]!.trim() !== 'ro') continue;
        out.push({
          subject: m.mount, severity: 'warning',
          title: `Filesystem ${m.mount} is read-only`,
          message: `${m.mount} (${m.device}${m.fstype ? `, ${m.fstype}` : ''}) is mounted read-only.`,
          evidence: { mount: m.mount, device: m.device, fstype: m.fstype, options },
          recommendation: `Check \`dmesg -T | grep -iE "error|remount"\` and \`smartctl -a ${shellArg(m.device, '<device>')}\`; after repairing (\`fsck\` on the unmounted filesystem) run \`mount -o remount,rw ${shellArg(m.mount, '<mount>')}\`.`,
        });
      }
      return out;
    },
  }),
  defineRule({
    alert_type: 'disk_latency_high', kind: 'state', category: 'storage', subject: 'device',
    description: 'A disk answers slowly: 99th-percentile latency above the level for its kind (NVMe, or other devices at 4 × the NVMe levels).',
    thresholds: { warning: 50, critical: 250, unit: 'milliseconds p99 on NVMe; other devices 4 × (200, 1000)' },
    guidance: 'Watch `iostat -x 1 5` (r_await, w_await, %util) for the device; a failing disk often shows high latency first (`smartctl -a <device>`); otherwise the device is overloaded: spread the load or move it to faster storage.',
    check(input) {
      const list = latencies(input);
      if (list.length === 0) return null;
      const lv = levels(input, 'disk_latency_high', { warning: 50, critical: 250 });
      const out: Draft[] = [];
      for (const l of list) {
        // Spinning and SATA devices are four times slower by nature; their levels scale with the NVMe ones.
        const scale = isNvme(l.device) ? 1 : 4;
        const scaled = { warning: lv.warning! * scale, critical: lv.critical! * scale };
        const severity = atOrAbove(l.ms, scaled);
        if (!severity) continue;
        out.push({
          subject: l.device, severity,
          title: `Disk ${l.device} latency ${fmt(l.ms, 0)} ms`,
          message: `${l.measure === 'p99' ? 'p99' : 'Average'} latency of ${l.device} is ${fmt(l.ms)} ms; the ${severity} level for ${scale === 1 ? 'NVMe' : 'this kind of device'} is ${levelOf(severity, scaled)} ms.`,
          evidence: { device: l.device, latency_ms: l.ms, measure: l.measure, nvme: scale === 1, threshold_ms: levelOf(severity, scaled) },
          recommendation: `Run \`iostat -x 1 5\` and look at r_await/w_await/%util of the device; check its health with \`smartctl -a ${shellArg(l.device, '<device>')}\`.`,
        });
      }
      return out;
    },
  }),
  defineRule({
    alert_type: 'disk_io_errors', kind: 'state', category: 'storage', subject: null,
    description: 'The kernel logged I/O errors on block devices.',
    thresholds: null,
    guidance: 'Read the errors with `dmesg -T | grep -iE "I/O error|blk_update_request|medium error"`, check every device named (`smartctl -a <device>`), reseat or replace cables and drives, and make sure backups are current.',
    check(input) {
      const errors = obj(input.snapshot.io_errors);
      const count = num(errors?.count);
      if (count === null) return null;
      if (count <= 0) return [];
      const devices = texts(errors!.devices);
      return [{
        subject: null, severity: 'critical',
        title: `${fmt(count, 0)} disk I/O error${count === 1 ? '' : 's'}`,
        message: `The kernel logged ${fmt(count, 0)} I/O error${count === 1 ? '' : 's'}${devices.length ? ` on ${devices.slice(0, 5).join(', ')}` : ''}.`,
        evidence: { count, devices },
        recommendation: `Run \`dmesg -T | grep -iE "I/O error|blk_update_request"\` and \`smartctl -a ${devices.length === 1 ? shellArg(devices[0]!.startsWith('/') ? devices[0]! : `/dev/${devices[0]}`, '<device>') : '<device>'}\`; replace the failing drive or cable and verify your backups.`,
      }];
    },
  }),
  ...DEVICE_RULES,
];
