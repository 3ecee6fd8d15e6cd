import { defineRule, fmt, num, text, uptime } from './common.js';
import type { RuleDefinition } from './types.js';

/** Lifecycle: reboots, reachability (a watchdog's rule), agent version. */

/** A reboot shows as uptime under this many seconds. */
const FRESH_BOOT_SECONDS = 600;

interface Semver { core: [number, number, number]; pre: string[] }

/** `1.2.3`, `v1.2.3`, `1.2.3-rc.1+build`; anything else is not a version. */
export function parseSemver(value: unknown): Semver | null {
  if (typeof value !== 'string' || value.length > 64) return null;
  const m = /^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/.exec(value.trim());
  if (!m) return null;
  return { core: [Number(m[1]), Number(m[2]), Number(m[3])], pre: m[4] ? m[4].split('.') : [] };
}

/** Semantic-versioning precedence: negative when a < b. */
export function compareSemver(a: Semver, b: Semver): number {
  for (let i = 0; i < 3; i++) if (a.core[i] !== b.core[i]) return a.core[i]! - b.core[i]!;
  // A pre-release sorts before its release.
  if (a.pre.length === 0 || b.pre.length === 0) return b.pre.length - a.pre.length;
  for (let i = 0; i < Math.min(a.pre.length, b.pre.length); i++) {
    const x = a.pre[i]!;
    const y = b.pre[i]!;
    if (x === y) continue;
    const xn = /^\d+$/.test(x);
    const yn = /^\d+$/.test(y);
    if (xn && yn) return Number(x) - Number(y);
    if (xn !== yn) return xn ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return a.pre.length - b.pre.length;
}

export const LIFECYCLE_RULES: RuleDefinition[] = [
  defineRule({
    alert_type: 'unexpected_reboot', kind: 'event', category: 'lifecycle', subject: null,
    description: 'The host rebooted without announcing it (the snapshot after a planned reboot carries `expected_reboot`).',
    thresholds: null,
    guidance: 'Find out why: `journalctl --list-boots`, the last lines before the reboot with `journalctl -b -1 -e`, `last -x reboot shutdown`, and hardware or power events in `ipmitool sel elist`. A kernel panic leaves traces in the BMC console log or kdump. Mark planned reboots with the agent so they do not alert.',
    check(input) {
      const previous = input.previous;
      const up = uptime(input);
      if (!previous || up === null) return null;
      const previousUptime = num(previous.uptime_seconds);
      const previousAt = typeof previous.received_at === 'string' ? Date.parse(previous.received_at) : NaN;
      if (previousUptime === null || !Number.isFinite(previousAt)) return null;
      const since = Math.max(0, (input.now.getTime() - previousAt) / 1000);
      // The uptime this snapshot would show had the host kept running; half of it leaves room for clock jitter.
      const expectedUptime = previousUptime + since;
      const announced = input.snapshot.expected_reboot;
      if (up >= FRESH_BOOT_SECONDS || up >= expectedUptime / 2) return [];
      if (announced === true || (announced !== null && typeof announced === 'object')) return [];
      return [{
        subject: null, severity: 'warning',
        title: 'Unexpected reboot',
        message: `The host booted ${fmt(up, 0)} s ago; the previous snapshot, ${fmt(since, 0)} s earlier, showed ${fmt(previousUptime, 0)} s of uptime.`,
        evidence: { uptime_seconds: up, previous_uptime_seconds: previousUptime, seconds_since_previous: since, boot_time: text(input.snapshot.system?.boot_time, 64) },
        recommendation: 'Run `journalctl --list-boots` and `journalctl -b -1 -e` for the last messages before the reboot, `last -x reboot shutdown`, and `ipmitool sel elist | tail -n 20` for power or hardware events.',
      }];
    },
  }),
  defineRule({
    alert_type: 'server_unreachable', kind: 'state', category: 'lifecycle', subject: null,
    description: 'No snapshot arrived for 3 push intervals (default 900 s; `config_overrides.interval_seconds` changes it); a server that never reported: 20 minutes after registration. Raised by a watchdog, resolved by the next snapshot.',
    thresholds: null,
    guidance: 'Check that the host is up (ping, the provider console or IPMI), that the agent runs (`systemctl status` of its unit, its log in `journalctl -u <unit>`), and that the host reaches this server over HTTPS (DNS, proxy, firewall egress). A rotated collector key also stops pushes: the agent logs 401.',
  }),
  defineRule({
    alert_type: 'agent_outdated', kind: 'state', category: 'lifecycle', subject: null,
    description: 'The agent is older than the minimum agent version this server supports (`MIN_AGENT_VERSION`).',
    thresholds: null,
    guidance: 'Update the agent on the host with the package manager it was installed with and restart it; `GET /api/v1/version` shows the latest and the minimum supported versions.',
    check(input) {
      const version = parseSemver(input.snapshot.collector_version);
      const minimum = parseSemver(input.minAgentVersion);
      if (!version || !minimum) return null;
      if (compareSemver(version, minimum) >= 0) return [];
      const reported = text(input.snapshot.collector_version, 64)!;
      return [{
        subject: null, severity: 'info',
        title: `Agent ${reported} is outdated`,
        message: `The agent reports version ${reported}; this server supports ${input.minAgentVersion} and later.`,
        evidence: { collector_version: reported, min_supported: input.minAgentVersion },
        recommendation: `Update the agent to ${input.minAgentVersion} or later with the package manager it was installed with, and restart it.`,
      }];
    },
  }),
];
