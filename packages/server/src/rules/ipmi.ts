import { atOrAbove, below, defineRule, fmt, levelOf, levels, num, obj, objects, text, type Draft } from './common.js';
import { DAY_MS, criticalSelEvents, eccHistory, eccRise, ipmiOf, isAbsent, isCritical, isFanSensor, seenSel, sensors, type Sensor } from './ipmi-read.js';
import type { RuleDefinition, RuleInput } from './types.js';

/** Hardware rules read from the BMC (IPMI): memory ECC, sensors, fans, power supplies, the event log, the CMOS battery. */

const quote = (name: string) => (/^[\w .#+-]+$/.test(name) ? `'${name}'` : "'<sensor>'");

interface Fan { name: string; rpm: number | null; status: string }

/** Fans from the agent's fan list, plus fan sensors it did not list (absent fans are in neither list as failures). */
function fans(input: RuleInput): Fan[] | null {
  const ipmi = ipmiOf(input);
  if (!ipmi) return null;
  const out = new Map<string, Fan>();
  for (const f of objects(ipmi.fans)) {
    const name = text(f.name, 100);
    if (name !== null) out.set(name, { name, rpm: num(f.rpm), status: text(f.status, 32)?.trim().toLowerCase() ?? '' });
  }
  for (const s of sensors(ipmi)) {
    if (isFanSensor(s) && !out.has(s.name)) out.set(s.name, { name: s.name, rpm: s.value, status: s.status });
  }
  return out.size > 0 ? [...out.values()] : null;
}

/** Power supply presence/status sensors; redundancy summaries and PSU temperature or power readings are not supplies. */
function powerSupplies(list: Sensor[]): Sensor[] {
  return list.filter((s) => (s.type.includes('power supply') || /^(psu?|pws)\s*-?\d/i.test(s.name))
    && !/redundan/i.test(s.name) && !/volt|watt|amp|degree|rpm|percent/.test(s.unit));
}

export const IPMI_RULES: RuleDefinition[] = [
  defineRule({
    alert_type: 'ecc_errors', kind: 'state', category: 'hardware', subject: null, boot_grace_seconds: 120,
    description: 'Memory reports ECC errors: correctable errors rising fast (warning) or any uncorrectable error (critical).',
    thresholds: { warning: 10, unit: 'correctable errors added within 24 h (any uncorrectable error is critical)' },
    guidance: 'Find the DIMM in the BMC event log (`ipmitool sel elist | grep -i ecc`) or with `edac-util -v` / `ras-mc-ctl --errors`. Rising correctable errors predict a failing module: replace it at the next window. Uncorrectable errors crash processes or the host: replace the module now.',
    check(input) {
      const ecc = obj(ipmiOf(input)?.ecc_errors);
      const correctable = num(ecc?.correctable);
      const uncorrectable = num(ecc?.uncorrectable);
      if (correctable === null && uncorrectable === null) return null;
      const lv = levels(input, 'ecc_errors', { warning: 10 });
      const rise = correctable === null ? 0 : eccRise(eccHistory(input.previous), input.now.getTime(), correctable);
      const severity = uncorrectable !== null && uncorrectable > 0 ? 'critical' : atOrAbove(rise, lv);
      if (!severity) return [];
      return [{
        subject: null, severity,
        title: severity === 'critical' ? `${fmt(uncorrectable!, 0)} uncorrectable ECC memory error${uncorrectable === 1 ? '' : 's'}` : `Correctable ECC errors rose by ${fmt(rise, 0)} in 24 h`,
        message: `ECC: ${correctable ?? '?'} correctable (${fmt(rise, 0)} added within 24 h), ${uncorrectable ?? '?'} uncorrectable.`,
        evidence: { correctable, uncorrectable, correctable_rise_24h: rise, threshold: severity === 'critical' ? 1 : levelOf(severity, lv) },
        recommendation: 'Find the module with `ipmitool sel elist | grep -i ecc` or `edac-util -v`; replace the DIMM (now if errors are uncorrectable).',
      }];
    },
  }),
  defineRule({
    alert_type: 'ipmi_sensor_critical', kind: 'state', category: 'hardware', subject: 'sensor',
    description: 'A BMC sensor reports a critical or non-recoverable status (fans are covered by ipmi_fan_failure).',
    thresholds: null,
    guidance: 'Read the sensor with `ipmitool sensor get <name>` and the event log with `ipmitool sel elist`; the sensor name tells the component (temperature, voltage, power). Fix the component, then check the status returns to ok.',
    check(input) {
      const ipmi = ipmiOf(input);
      const list = sensors(ipmi);
      if (list.length === 0) return null;
      const out: Draft[] = [];
      for (const s of list) {
        // One alert per fault: a fan at a critical status is ipmi_fan_failure's.
        if (!isCritical(s.status) || isFanSensor(s)) continue;
        const unit = text(s.s.unit, 32);
        out.push({
          subject: s.name, severity: 'critical',
          title: `Sensor ${s.name} is critical`,
          message: `${s.name}${s.type ? ` (${s.type})` : ''} reads ${s.value ?? 'no value'}${unit && s.value !== null ? ` ${unit}` : ''} with status ${s.status}.`,
          evidence: { sensor: s.name, type: text(s.s.type, 64), value: s.value, unit, status: s.status, lower_critical: num(s.s.lower_critical), upper_critical: num(s.s.upper_critical) },
          recommendation: `Run \`ipmitool sensor get ${quote(s.name)}\` and \`ipmitool sel elist | tail -n 20\`; check the component the sensor watches.`,
        });
      }
      return out;
    },
  }),
  defineRule({
    alert_type: 'ipmi_fan_failure', kind: 'state', category: 'hardware', subject: 'sensor', boot_grace_seconds: 60,
    description: 'A fan stopped (0 RPM) or reports a critical status; empty fan headers are not checked.',
    thresholds: null,
    guidance: 'Check `ipmitool sdr type Fan`, replace the fan module, and watch temperatures meanwhile (`ipmitool sdr type Temperature`).',
    check(input) {
      const list = fans(input);
      if (!list) return null;
      const out: Draft[] = [];
      for (const f of list) {
        if (isAbsent(f.status)) continue;
        const critical = isCritical(f.status);
        if (!critical && f.rpm !== 0) continue;
        out.push({
          subject: f.name, severity: 'critical',
          title: f.rpm === 0 ? `Fan ${f.name} stopped` : `Fan ${f.name} is critical`,
          message: `${f.name}: ${f.rpm === null ? 'no speed reading' : `${fmt(f.rpm, 0)} RPM`}, status ${f.status || 'unknown'}.`,
          evidence: { sensor: f.name, rpm: f.rpm, status: f.status || null },
          recommendation: 'Run `ipmitool sdr type Fan` to confirm, replace the fan module, and watch `ipmitool sdr type Temperature` until it is replaced.',
        });
      }
      return out;
    },
  }),
  defineRule({
    alert_type: 'psu_redundancy_loss', kind: 'state', category: 'hardware', subject: null,
    description: 'A host with two or more power supplies has one failed or absent: the next failure cuts power.',
    thresholds: null,
    guidance: 'Check `ipmitool sdr type "Power Supply"` and `ipmitool sel elist`; a lost supply is often a loose cord or a dead PDU feed. Reseat the cord, check the feed, or replace the supply.',
    check(input) {
      const list = sensors(ipmiOf(input));
      if (list.length === 0) return null;
      const supplies = powerSupplies(list);
      if (supplies.length < 2) return [];
      const bad = supplies.filter((s) => isCritical(s.status) || isAbsent(s.status) || /fail|fault|lost/.test(s.status));
      if (bad.length === 0) return [];
      return [{
        subject: null, severity: 'critical',
        title: `Power supply redundancy lost (${bad.map((s) => s.name).slice(0, 3).join(', ')})`,
        message: `${bad.length} of ${supplies.length} power supplies failed or absent: ${bad.map((s) => `${s.name} (${s.status || 'unknown'})`).slice(0, 5).join(', ')}.`,
        evidence: { supplies: supplies.map((s) => ({ sensor: s.name, status: s.status || null })), failed: bad.map((s) => s.name) },
        recommendation: 'Run `ipmitool sdr type "Power Supply"` and `ipmitool sel elist | tail -n 20`; reseat the power cord, check the PDU feed, or replace the supply.',
      }];
    },
  }),
  defineRule({
    alert_type: 'ipmi_sel_critical', kind: 'event', category: 'hardware', subject: null,
    description: 'The BMC logged a critical event (asserted) that was not seen before.',
    thresholds: null,
    guidance: 'Read the log with `ipmitool sel elist | tail -n 30` and act on the component named. Save the log before clearing it: `ipmitool sel save /root/sel-$(date +%F).txt`. On a server\'s first snapshot only events of the last 24 h are raised; older ones are remembered as seen.',
    check(input) {
      const ipmi = ipmiOf(input);
      if (!ipmi || !Array.isArray(ipmi.sel_events_recent)) return null;
      const seen = seenSel(input.previous);
      const now = input.now.getTime();
      const fresh = criticalSelEvents(ipmi).filter((e) => {
        if (seen.has(e.key)) return false;
        if (input.previous !== null) return true;
        // First snapshot: the excerpt holds the last events however old they are; only today's are news.
        const at = e.timestamp ? Date.parse(e.timestamp) : NaN;
        return Number.isFinite(at) && at >= now - DAY_MS;
      });
      if (fresh.length === 0) return [];
      const first = fresh[0]!;
      return [{
        subject: null, severity: 'critical',
        title: fresh.length === 1 ? `BMC event: ${first.event ?? 'critical event'}${first.sensor ? ` (${first.sensor})` : ''}` : `${fresh.length} new critical BMC events`,
        message: fresh.slice(0, 5).map((e) => `${e.timestamp ?? '?'} ${e.sensor ?? '?'}: ${e.event ?? '?'}`).join('; '),
        evidence: { events: fresh.map(({ id, timestamp, sensor, event }) => ({ id, timestamp, sensor, event })) },
        recommendation: 'Run `ipmitool sel elist | tail -n 30` and check the component named; save the log (`ipmitool sel save /root/sel-$(date +%F).txt`) before clearing it.',
      }];
    },
  }),
  defineRule({
    alert_type: 'ipmi_sel_full', kind: 'state', category: 'hardware', subject: null,
    description: 'The BMC event log is nearly full; when full, new hardware events are not recorded.',
    thresholds: { warning: 3000, unit: 'SEL entries' },
    guidance: 'Save and clear the log: `ipmitool sel save /root/sel-$(date +%F).txt && ipmitool sel clear`. Look through it first for recurring events.',
    check(input) {
      const count = num(ipmiOf(input)?.sel_entries_count);
      if (count === null) return null;
      const lv = levels(input, 'ipmi_sel_full', { warning: 3000 });
      const severity = atOrAbove(count, lv);
      if (!severity) return [];
      return [{
        subject: null, severity,
        title: `BMC event log holds ${fmt(count, 0)} entries`,
        message: `The SEL holds ${fmt(count, 0)} entries (level ${levelOf(severity, lv)}); new events may be dropped when it is full.`,
        evidence: { sel_entries_count: count, threshold: levelOf(severity, lv) },
        recommendation: 'Run `ipmitool sel save /root/sel-$(date +%F).txt && ipmitool sel clear` after reading it for recurring events.',
      }];
    },
  }),
  defineRule({
    alert_type: 'cmos_battery_low', kind: 'state', category: 'hardware', subject: null,
    description: 'The CMOS (RTC) battery voltage is low: BIOS settings and the clock are lost at the next power cut.',
    thresholds: { warning: 2.6, unit: 'volts (alert below)' },
    guidance: 'Replace the coin cell (usually CR2032) on the mainboard at the next maintenance window, then check the BIOS settings and clock.',
    check(input) {
      const batteries = sensors(ipmiOf(input)).filter((s) => /vbat|cmos|batt|^3vb$/i.test(s.name)
        && (s.unit === '' || s.unit.includes('volt')) && s.value !== null && !isAbsent(s.status));
      if (batteries.length === 0) return null;
      const lowest = batteries.reduce((a, b) => (b.value! < a.value! ? b : a));
      const lv = levels(input, 'cmos_battery_low', { warning: 2.6 });
      const severity = below(lowest.value!, lv);
      if (!severity) return [];
      return [{
        subject: null, severity,
        title: `CMOS battery at ${fmt(lowest.value!, 2)} V`,
        message: `${lowest.name} reads ${fmt(lowest.value!, 2)} V, below ${levelOf(severity, lv)} V.`,
        evidence: { sensor: lowest.name, volts: lowest.value, threshold: levelOf(severity, lv) },
        recommendation: 'Replace the mainboard coin cell (usually CR2032) at the next maintenance window; check BIOS settings and the clock afterwards.',
      }];
    },
  }),
];
