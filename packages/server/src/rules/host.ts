import { atOrAbove, below, defineRule, fmt, levelOf, levels, num, obj, pct, shellArg, text } from './common.js';
import type { RuleDefinition, RuleInput } from './types.js';

/** Host resources: CPU, memory, processes, time, kernel tables, systemd. */

const cpuOf = (input: RuleInput) => obj(input.snapshot.cpu);
const osAlerts = (input: RuleInput) => obj(input.snapshot.os_alerts);

/** "length of cpu.cores, else 1": a null element is still a core whose numbers were unreadable. */
function coreCount(input: RuleInput): number {
  const cores = cpuOf(input)?.cores;
  return Array.isArray(cores) && cores.length > 0 ? cores.length : 1;
}

const TOP_CPU = 'Find what is busy with `top -o %CPU` or `ps -eo pid,user,comm,%cpu --sort=-%cpu | head -15`.';

export const HOST_RULES: RuleDefinition[] = [
  defineRule({
    alert_type: 'cpu_high', kind: 'state', category: 'host', subject: null,
    description: 'The CPU is busy (100 − idle) at or above the level across all cores.',
    thresholds: { warning: 90, critical: 98, unit: 'percent busy (100 − idle)' },
    guidance: `${TOP_CPU} Decide whether the load is expected (a batch job, a build) or a runaway process; sustained saturation means the host needs more cores or less work.`,
    check(input) {
      const idle = num(cpuOf(input)?.idle_percent);
      if (idle === null) return null;
      const busy = 100 - idle;
      const lv = levels(input, 'cpu_high', { warning: 90, critical: 98 });
      const severity = atOrAbove(busy, lv);
      if (!severity) return [];
      return [{
        subject: null, severity,
        title: `CPU is ${fmt(busy)}% busy`,
        message: `CPU busy ${fmt(busy)}% (idle ${fmt(idle)}%), at or above the ${severity} level of ${levelOf(severity, lv)}%.`,
        evidence: { busy_percent: busy, idle_percent: idle, threshold: levelOf(severity, lv) },
        recommendation: `${TOP_CPU} If a process runs away, restart it or limit it (\`systemctl set-property <unit> CPUQuota=…\`).`,
      }];
    },
  }),
  defineRule({
    alert_type: 'load_high', kind: 'state', category: 'host', subject: null,
    description: 'The 1-minute load average is high for the number of CPU cores.',
    thresholds: { warning: 1.5, critical: 3, unit: 'load_1m per CPU core' },
    guidance: 'Compare load with CPU use: high load with idle CPUs means processes waiting on disk or network (state D). Use `uptime`, `top`, `ps -eo state,pid,cmd | grep "^D"` and `iostat -x 1 5`.',
    check(input) {
      const load = num(cpuOf(input)?.load_1m);
      if (load === null) return null;
      const cores = coreCount(input);
      const lv = levels(input, 'load_high', { warning: 1.5, critical: 3 });
      const severity = atOrAbove(load / cores, lv);
      if (!severity) return [];
      return [{
        subject: null, severity,
        title: `Load ${fmt(load, 2)} on ${cores} core${cores === 1 ? '' : 's'}`,
        message: `1-minute load ${fmt(load, 2)} is ${fmt(load / cores, 2)} per core, at or above ${levelOf(severity, lv)} × ${cores} cores.`,
        evidence: { load_1m: load, cores, per_core: load / cores, threshold_per_core: levelOf(severity, lv) },
        recommendation: 'Run `uptime` and `top`; if the CPUs are not busy, look for processes blocked on I/O with `ps -eo state,pid,cmd | grep "^D"` and `iostat -x 1 5`.',
      }];
    },
  }),
  defineRule({
    alert_type: 'cpu_iowait_high', kind: 'state', category: 'host', subject: null,
    description: 'The CPUs spend a large share of time waiting for I/O while there is work queued (load_1m ≥ 1).',
    thresholds: { warning: 20, unit: 'percent iowait (with load_1m ≥ 1)' },
    guidance: 'Find the saturated device with `iostat -x 1 5` (%util, r_await, w_await) and the processes with `iotop -o`; check the disk rules of this host for a failing drive.',
    check(input) {
      const iowait = num(cpuOf(input)?.iowait_percent);
      const load = num(cpuOf(input)?.load_1m);
      if (iowait === null || load === null) return null;
      const lv = levels(input, 'cpu_iowait_high', { warning: 20 });
      // Without queued work a high iowait share is an idle host waiting on one slow read, not a problem.
      const severity = load >= 1 ? atOrAbove(iowait, lv) : null;
      if (!severity) return [];
      return [{
        subject: null, severity,
        title: `CPU iowait at ${fmt(iowait)}%`,
        message: `CPU iowait ${fmt(iowait)}% (level ${levelOf(severity, lv)}%) with load ${fmt(load, 2)}.`,
        evidence: { iowait_percent: iowait, load_1m: load, threshold: levelOf(severity, lv) },
        recommendation: 'Run `iostat -x 1 5` to find the saturated device and `iotop -o` for the processes doing the I/O; `smartctl -a /dev/<disk>` if one device is slow.',
      }];
    },
  }),
  defineRule({
    alert_type: 'ram_high', kind: 'state', category: 'host', subject: null,
    description: 'Little memory is available; without `available_mb`, the used share is high (90 % warning, 95 % critical).',
    thresholds: { warning: 5, critical: 2, unit: 'percent of memory available (alert below)' },
    guidance: 'See what holds memory with `free -m` and `ps -eo pid,comm,rss --sort=-rss | head`; check for leaks (RSS that only grows) and recent OOM kills; add memory or limit the biggest consumers.',
    check(input) {
      const mem = obj(input.snapshot.memory);
      const total = num(mem?.total_mb);
      if (total === null || total <= 0) return null;
      const available = num(mem?.available_mb);
      const used = num(mem?.used_mb);
      const recommendation = 'Run `free -m` and `ps -eo pid,comm,rss --sort=-rss | head -15`; restart or limit a leaking process (`systemctl set-property <unit> MemoryMax=…`), or add memory.';
      if (available !== null) {
        const availablePct = pct(available, total);
        const lv = levels(input, 'ram_high', { warning: 5, critical: 2 });
        const severity = below(availablePct, lv);
        if (!severity) return [];
        return [{
          subject: null, severity,
          title: `Only ${fmt(availablePct)}% of memory available`,
          message: `${fmt(available, 0)} MB of ${fmt(total, 0)} MB available (${fmt(availablePct)}%), below the ${severity} level of ${levelOf(severity, lv)}%.`,
          evidence: { available_mb: available, total_mb: total, available_percent: availablePct, threshold: levelOf(severity, lv) },
          recommendation,
        }];
      }
      if (used === null) return null;
      // Old agents send no available_mb: fixed used-share levels (overrides speak of available memory).
      const usedPct = pct(used, total);
      const severity = atOrAbove(usedPct, { warning: 90, critical: 95 });
      if (!severity) return [];
      return [{
        subject: null, severity,
        title: `Memory ${fmt(usedPct)}% used`,
        message: `${fmt(used, 0)} MB of ${fmt(total, 0)} MB used (${fmt(usedPct)}%); the agent reports no available memory, so the used share is checked.`,
        evidence: { used_mb: used, total_mb: total, used_percent: usedPct, threshold: severity === 'critical' ? 95 : 90 },
        recommendation,
      }];
    },
  }),
  defineRule({
    alert_type: 'swap_high', kind: 'state', category: 'host', subject: null,
    description: 'Much of the swap space is in use.',
    thresholds: { warning: 50, critical: 80, unit: 'percent of swap used' },
    guidance: 'Heavy swap use slows everything down. Check `free -m`, `vmstat 1 5` (si/so columns show active swapping) and which processes are swapped out (`grep VmSwap /proc/*/status | sort -k2 -n | tail`).',
    check(input) {
      const mem = obj(input.snapshot.memory);
      const total = num(mem?.swap_total_mb);
      const used = num(mem?.swap_used_mb);
      if (total === null || used === null) return null;
      if (total <= 0) return [];
      const usedPct = pct(used, total);
      const lv = levels(input, 'swap_high', { warning: 50, critical: 80 });
      const severity = atOrAbove(usedPct, lv);
      if (!severity) return [];
      return [{
        subject: null, severity,
        title: `Swap ${fmt(usedPct)}% used`,
        message: `${fmt(used, 0)} MB of ${fmt(total, 0)} MB swap used (${fmt(usedPct)}%), level ${levelOf(severity, lv)}%.`,
        evidence: { swap_used_mb: used, swap_total_mb: total, used_percent: usedPct, threshold: levelOf(severity, lv) },
        recommendation: 'Run `vmstat 1 5` (si/so: active swapping) and `grep VmSwap /proc/*/status | sort -k2 -n | tail` to see who is swapped out; free memory or add RAM.',
      }];
    },
  }),
  defineRule({
    alert_type: 'oom_kills', kind: 'event', category: 'host', subject: null,
    description: 'The kernel killed processes because memory ran out.',
    thresholds: null,
    guidance: 'Find the victims and the memory state at the time with `journalctl -k | grep -i "killed process"` (or `dmesg -T | grep -i oom`); limit or fix the process that grows, or add memory.',
    check(input) {
      const kills = num(osAlerts(input)?.oom_kills_recent);
      if (kills === null) return null;
      if (kills <= 0) return [];
      return [{
        subject: null, severity: 'critical',
        title: `${fmt(kills, 0)} process${kills === 1 ? '' : 'es'} killed for lack of memory`,
        message: `The kernel's OOM killer ended ${fmt(kills, 0)} process${kills === 1 ? '' : 'es'} recently.`,
        evidence: { oom_kills_recent: kills },
        recommendation: 'Run `journalctl -k | grep -i "killed process"` to see which processes died and their memory; restart what should run and cap or fix the one that grows.',
      }];
    },
  }),
  defineRule({
    alert_type: 'zombie_processes', kind: 'state', category: 'host', subject: null,
    description: 'Many zombie processes: a parent process does not reap its children.',
    thresholds: { warning: 50, unit: 'zombie processes' },
    guidance: 'Zombies use no memory but fill the process table. Find their parent with `ps -eo ppid,pid,stat,comm | awk \'$3 ~ /Z/\'` and restart or fix it.',
    check(input) {
      const zombies = num(osAlerts(input)?.zombie_processes);
      if (zombies === null) return null;
      const lv = levels(input, 'zombie_processes', { warning: 50 });
      const severity = atOrAbove(zombies, lv);
      if (!severity) return [];
      return [{
        subject: null, severity,
        title: `${fmt(zombies, 0)} zombie processes`,
        message: `${fmt(zombies, 0)} zombie processes (level ${levelOf(severity, lv)}).`,
        evidence: { zombie_processes: zombies, threshold: levelOf(severity, lv) },
        recommendation: 'Run `ps -eo ppid,pid,stat,comm | awk \'$3 ~ /Z/\'` to find the parent (PPID) that does not reap its children, then restart or fix it.',
      }];
    },
  }),
  ...timeRules(),
  ...tableRules(),
  defineRule({
    alert_type: 'systemd_service_failed', kind: 'state', category: 'host', subject: null,
    description: 'One or more systemd units are in the failed state.',
    thresholds: null,
    guidance: 'List them with `systemctl --failed`, read why with `journalctl -u <unit> -n 50`, fix and `systemctl restart <unit>`; a unit that is not needed: `systemctl disable <unit>` and `systemctl reset-failed`.',
    check(input) {
      const systemd = obj(input.snapshot.systemd);
      if (!systemd) return null;
      const units = Array.isArray(systemd.failed_units) ? systemd.failed_units : null;
      const count = num(systemd.failed_count) ?? units?.length ?? null;
      if (count === null) return null;
      if (count <= 0) return [];
      // Agents list units as names or as objects naming them.
      const names = (units ?? []).map((u) => text(u) ?? text(obj(u)?.unit) ?? text(obj(u)?.name)).filter((n): n is string => n !== null);
      return [{
        subject: null, severity: 'warning',
        title: `${fmt(count, 0)} failed systemd unit${count === 1 ? '' : 's'}`,
        message: `Failed: ${names.length ? names.slice(0, 5).join(', ') : 'unnamed units'}${names.length > 5 ? ` and ${names.length - 5} more` : ''}.`,
        evidence: { failed_count: count, failed_units: names },
        recommendation: `Run \`systemctl --failed\` and \`journalctl -u ${shellArg(names.length === 1 ? names[0]! : null, '<unit>')} -n 50\`; fix the cause and restart the unit, or \`systemctl reset-failed\` if it is not needed.`,
      }];
    },
  }),
];

function timeRules(): RuleDefinition[] {
  return [
    defineRule({
      alert_type: 'clock_drift', kind: 'state', category: 'host', subject: null, boot_grace_seconds: 300,
      description: 'The system clock differs from real time.',
      thresholds: { warning: 5_000, critical: 60_000, unit: 'milliseconds of drift (absolute)' },
      guidance: 'A drifting clock breaks TLS, logs and distributed systems. Check `timedatectl` and `chronyc tracking`; enable time synchronisation (`timedatectl set-ntp true`) and allow outbound UDP 123.',
      check(input) {
        const drift = num(osAlerts(input)?.time_drift_ms);
        if (drift === null) return null;
        const lv = levels(input, 'clock_drift', { warning: 5_000, critical: 60_000 });
        const severity = atOrAbove(Math.abs(drift), lv);
        if (!severity) return [];
        return [{
          subject: null, severity,
          title: `Clock is off by ${fmt(Math.abs(drift) / 1000)} s`,
          message: `The system clock is off by ${fmt(Math.abs(drift), 0)} ms (level ${levelOf(severity, lv)} ms).`,
          evidence: { time_drift_ms: drift, threshold_ms: levelOf(severity, lv) },
          recommendation: 'Run `timedatectl` and `chronyc tracking`; turn on synchronisation with `timedatectl set-ntp true` (or start chronyd) and allow outbound UDP 123.',
        }];
      },
    }),
    defineRule({
      alert_type: 'ntp_not_synced', kind: 'state', category: 'host', subject: null, boot_grace_seconds: 300,
      description: 'The clock is not synchronised to a time source.',
      thresholds: null,
      guidance: 'Check `timedatectl status`, then the daemon: `chronyc sources -v` or `systemctl status systemd-timesyncd`. Make sure one time daemon runs and outbound UDP 123 is allowed.',
      check(input) {
        const ntp = obj(input.snapshot.ntp);
        const synced = ntp?.synced;
        if (typeof synced !== 'boolean') return null;
        if (synced) return [];
        const daemon = text(ntp!.daemon_name, 64);
        return [{
          subject: null, severity: 'warning',
          title: 'Clock not synchronised (NTP)',
          message: ntp!.daemon_running === false ? 'No time synchronisation daemon is running.' : `The time daemon${daemon ? ` (${daemon})` : ''} is not synchronised.`,
          evidence: { synced: false, daemon_running: ntp!.daemon_running ?? null, daemon_name: daemon, source: text(ntp!.source, 64) },
          recommendation: 'Run `timedatectl status`; enable a time daemon (`timedatectl set-ntp true`, or `systemctl enable --now chronyd`), check `chronyc sources -v` and that outbound UDP 123 is open.',
        }];
      },
    }),
  ];
}

/** File descriptors and conntrack: kernel tables that refuse new entries when full. */
function tableRules(): RuleDefinition[] {
  const table = (type: string, block: 'file_descriptors' | 'conntrack', what: string, recommendation: string, guidance: string) => defineRule({
    alert_type: type, kind: 'state', category: 'host', subject: null,
    description: `The ${what} table is nearly full; new ${block === 'conntrack' ? 'connections are dropped' : 'files and sockets cannot be opened'} when it is.`,
    thresholds: { warning: 80, critical: 95, unit: 'percent of the kernel maximum' },
    guidance,
    check(input) {
      const b = obj(input.snapshot[block]);
      if (!b || b.available === false) return null;
      const max = num(b.max);
      const count = num(b.count) ?? num(b.allocated);
      const used = num(b.percent) ?? (count !== null && max !== null && max > 0 ? pct(count, max) : null);
      if (used === null) return null;
      const lv = levels(input, type, { warning: 80, critical: 95 });
      const severity = atOrAbove(used, lv);
      if (!severity) return [];
      return [{
        subject: null, severity,
        title: `${what[0]!.toUpperCase()}${what.slice(1)} table ${fmt(used)}% full`,
        message: `${count !== null ? `${fmt(count, 0)} of ${max !== null ? fmt(max, 0) : '?'} ${what} entries` : 'The table'} in use (${fmt(used)}%), level ${levelOf(severity, lv)}%.`,
        evidence: { percent: used, count, max, threshold: levelOf(severity, lv) },
        recommendation,
      }];
    },
  });
  return [
    table('fd_exhaustion', 'file_descriptors', 'file descriptor',
      'Run `cat /proc/sys/fs/file-nr` and find the holder with `for p in /proc/[0-9]*; do echo "$(ls $p/fd 2>/dev/null | wc -l) $p"; done | sort -n | tail`; fix a descriptor leak, or raise `fs.file-max` if the use is legitimate.',
      'Find the process holding descriptors (`ls /proc/<pid>/fd | wc -l`, `lsof -p <pid>`); a count that only grows is a leak. Raise `fs.file-max` only for legitimate use.'),
    table('conntrack_exhaustion', 'conntrack', 'connection tracking',
      'Run `conntrack -C` and `sysctl net.netfilter.nf_conntrack_max`; find the busiest peers with `conntrack -L | awk \'{print $5}\' | sort | uniq -c | sort -rn | head`; raise `nf_conntrack_max` or shorten timeouts.',
      'A full conntrack table drops new connections silently. Check `conntrack -C` against `nf_conntrack_max`, look for a flood or a leaking client, raise the maximum or lower `nf_conntrack_tcp_timeout_established`.'),
  ];
}
