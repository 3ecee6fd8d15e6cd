import { atOrAbove, below, defineRule, fmt, levelOf, levels, num, objects, pct, shellArg, text, type Draft, type Obj } from './common.js';
import type { RuleDefinition, RuleInput } from './types.js';

/**
 * Network interfaces. The agent sends error, drop and packet counts as
 * deltas over its collection interval (it keeps the previous kernel
 * counters itself and sends 0 on its first cycle), so "in the interval" is
 * the value as sent and no counters need remembering here.
 */

interface Nic { name: string; nic: Obj; operstate: string | null }

/** Named interfaces, or null when there are none (an empty list says nothing about links). */
function nics(input: RuleInput): Nic[] | null {
  const out: Nic[] = [];
  for (const nic of objects(input.snapshot.network)) {
    const name = text(nic.interface, 64);
    if (name !== null) out.push({ name, nic, operstate: text(nic.operstate, 32)?.trim().toLowerCase() ?? null });
  }
  return out.length > 0 ? out : null;
}

/**
 * Interfaces whose speed is not a cable and a switch port: the catalog's
 * virtual interfaces, plus `idrac`, the USB link a Dell host shares with its
 * own BMC, which runs below a gigabit by design.
 */
const FIXED_SPEED = /^(lo$|docker|veth|br-|virbr|ifb|tun|tap|idrac$)/;
/** operstate values that mean the link is not carrying traffic. */
const LINK_DOWN = new Set(['down', 'lowerlayerdown', 'notpresent']);
/** Drops are also counted for frames nobody asked for; a handful on a quiet port is noise, not a fault. */
const MIN_DROPS = 10;

const sum = (a: number | null, b: number | null) => (a === null && b === null ? null : (a ?? 0) + (b ?? 0));

const ETHTOOL = (name: string) => shellArg(name, '<interface>');

export const NETWORK_RULES: RuleDefinition[] = [
  defineRule({
    alert_type: 'interface_errors', kind: 'state', category: 'network', subject: 'interface', boot_grace_seconds: 120,
    description: 'An interface counted receive or transmit errors in the last interval, or dropped at least 1 % of its packets (and at least 10).',
    thresholds: { warning: 10, critical: 100, unit: 'rx + tx errors in the interval' },
    guidance: 'Errors point at the physical layer: check `ip -s link show <interface>` and `ethtool -S <interface>` (crc, frame, carrier counters), swap the cable or transceiver, and look at the switch port\'s error counters. Drops without errors point at overload: ring buffers (`ethtool -g`), CPU softirq load, or traffic nobody listens for.',
    check(input) {
      const list = nics(input);
      if (!list) return null;
      const lv = levels(input, 'interface_errors', { warning: 10, critical: 100 });
      const out: Draft[] = [];
      for (const { name, nic } of list) {
        const errors = sum(num(nic.rx_errors), num(nic.tx_errors));
        const drops = sum(num(nic.rx_drops), num(nic.tx_drops));
        const packets = sum(num(nic.rx_packets), num(nic.tx_packets));
        const dropPct = drops !== null && packets !== null && packets > 0 ? pct(drops, packets) : null;
        const byErrors = errors === null ? null : atOrAbove(errors, lv);
        const byDrops = dropPct !== null && dropPct >= 1 && drops! >= MIN_DROPS ? 'warning' : null;
        const severity = byErrors ?? byDrops;
        if (!severity) continue;
        const what = byErrors
          ? `${fmt(errors!, 0)} errors (level ${levelOf(byErrors, lv)})`
          : `${fmt(drops!, 0)} dropped of ${fmt(packets!, 0)} packets (${fmt(dropPct!)}%)`;
        out.push({
          subject: name, severity,
          title: `Interface ${name}: ${byErrors ? `${fmt(errors!, 0)} errors` : `${fmt(dropPct!)}% packets dropped`}`,
          message: `${name} had ${what} in the last interval.`,
          evidence: { interface: name, rx_errors: num(nic.rx_errors), tx_errors: num(nic.tx_errors), rx_drops: num(nic.rx_drops), tx_drops: num(nic.tx_drops), rx_packets: num(nic.rx_packets), tx_packets: num(nic.tx_packets), drop_percent: dropPct, threshold: byErrors ? levelOf(byErrors, lv) : 1 },
          recommendation: `Run \`ip -s link show ${ETHTOOL(name)}\` and \`ethtool -S ${ETHTOOL(name)}\`; ${byErrors ? 'errors mean a bad cable, transceiver or switch port: swap them and check the port counters on the switch' : 'drops without errors mean overload: check ring buffers (`ethtool -g`) and softirq CPU load'}.`,
        });
      }
      return out;
    },
  }),
  defineRule({
    alert_type: 'link_speed_mismatch', kind: 'state', category: 'network', subject: 'interface',
    description: 'A physical interface that is up negotiated less than a gigabit, usually a bad cable or a misconfigured switch port.',
    thresholds: { warning: 1000, unit: 'Mb/s negotiated (alert below)' },
    guidance: 'Check the negotiated speed and duplex with `ethtool <interface>`; replace the cable (Cat5e or better), check the switch port configuration, and re-enable auto-negotiation (`ethtool -s <interface> autoneg on`). Virtual interfaces (lo, docker*, veth*, br-*, virbr*, ifb*, tun*, tap*) and the Dell iDRAC USB link (`idrac`) are not checked.',
    check(input) {
      const list = nics(input);
      if (!list) return null;
      const lv = levels(input, 'link_speed_mismatch', { warning: 1000 });
      const out: Draft[] = [];
      for (const { name, nic, operstate } of list) {
        const speed = num(nic.speed_mbps);
        if (operstate !== 'up' || speed === null || speed <= 0 || FIXED_SPEED.test(name)) continue;
        const severity = below(speed, lv);
        if (!severity) continue;
        out.push({
          subject: name, severity,
          title: `Interface ${name} linked at ${fmt(speed, 0)} Mb/s`,
          message: `${name} is up at ${fmt(speed, 0)} Mb/s, below ${levelOf(severity, lv)} Mb/s.`,
          evidence: { interface: name, speed_mbps: speed, operstate, threshold_mbps: levelOf(severity, lv) },
          recommendation: `Run \`ethtool ${ETHTOOL(name)}\` to see speed and duplex; replace the cable, check the switch port, and \`ethtool -s ${ETHTOOL(name)} autoneg on\`.`,
        });
      }
      return out;
    },
  }),
  defineRule({
    alert_type: 'interface_saturation', kind: 'state', category: 'network', subject: 'interface',
    description: 'An interface carries traffic close to its link speed in one direction.',
    thresholds: { warning: 90, unit: 'percent of link speed (max of rx, tx)' },
    guidance: 'Find the traffic with `iftop -i <interface>` or `nload <interface>` and `ss -tinp`; then rate-limit the source, spread it over more links (bonding), or move to a faster link.',
    check(input) {
      const list = nics(input);
      if (!list) return null;
      const lv = levels(input, 'interface_saturation', { warning: 90 });
      const out: Draft[] = [];
      for (const { name, nic } of list) {
        const speed = num(nic.speed_mbps);
        const rx = num(nic.rx_bytes_sec);
        const tx = num(nic.tx_bytes_sec);
        if (speed === null || speed <= 0 || (rx === null && tx === null)) continue;
        const peak = Math.max(rx ?? 0, tx ?? 0);
        const used = pct((peak * 8) / 1e6, speed);
        const severity = atOrAbove(used, lv);
        if (!severity) continue;
        out.push({
          subject: name, severity,
          title: `Interface ${name} at ${fmt(used, 0)}% of link speed`,
          message: `${name} carries ${fmt((peak * 8) / 1e6, 0)} Mb/s ${peak === rx ? 'in' : 'out'} on a ${fmt(speed, 0)} Mb/s link (${fmt(used)}%).`,
          evidence: { interface: name, rx_bytes_sec: rx, tx_bytes_sec: tx, speed_mbps: speed, percent: used, threshold: levelOf(severity, lv) },
          recommendation: `Run \`iftop -i ${ETHTOOL(name)}\` (or \`nload\`) to find the traffic; rate-limit it, bond more links, or upgrade the link.`,
        });
      }
      return out;
    },
  }),
  defineRule({
    alert_type: 'bond_slave_down', kind: 'state', category: 'network', subject: 'interface', boot_grace_seconds: 60,
    description: 'A member of a bond has no link: the bond runs without redundancy or with less bandwidth.',
    thresholds: null,
    guidance: 'Check the bond with `cat /proc/net/bonding/<bond>` and the member with `ip link show <interface>` and `ethtool <interface>`; reseat or replace the cable or transceiver and check the switch port.',
    check(input) {
      const list = nics(input);
      if (!list) return null;
      const out: Draft[] = [];
      for (const { name, nic, operstate } of list) {
        const bond = text(nic.bond_master, 64);
        if (bond === null || operstate === null || !LINK_DOWN.has(operstate)) continue;
        out.push({
          subject: name, severity: 'critical',
          title: `Bond ${bond}: member ${name} is down`,
          message: `${name}, a member of ${bond}, is ${operstate}.`,
          evidence: { interface: name, bond_master: bond, operstate },
          recommendation: `Run \`cat /proc/net/bonding/${shellArg(bond, '<bond>')}\` and \`ethtool ${ETHTOOL(name)}\`; reseat or replace the cable or transceiver and check the switch port.`,
        });
      }
      return out;
    },
  }),
];
