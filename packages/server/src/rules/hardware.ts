import { atOrAbove, defineRule, fmt, levels, num, obj, objects, pct, text, texts, type Draft, type Levels, type Obj } from './common.js';
import { IPMI_RULES } from './ipmi.js';
import { ipmiOf, isAbsent, sensors } from './ipmi-read.js';
import type { RuleDefinition, RuleInput } from './types.js';

/** Hardware: CPU temperature, the IPMI rules (ipmi.ts) and GPUs, in catalog order. */

interface Reading { celsius: number; source: string; lv: Levels }

/**
 * The hottest CPU reading and the levels that apply to it. The kernel's
 * thermal readings come first; without them, IPMI CPU temperature sensors
 * are judged against their own upper critical threshold (−15 °C warning,
 * −5 °C critical). A server's override is an absolute temperature and wins
 * over both.
 */
function cpuTemperature(input: RuleInput): Reading | null {
  const base = levels(input, 'cpu_temperature_high', { warning: 80, critical: 90 });
  const override = obj(obj(input.thresholds)?.cpu_temperature_high);
  const thermal = obj(input.snapshot.thermal);
  if (thermal && thermal.available !== false) {
    const readings = objects(thermal.cpu_readings).map((r) => num(r.celsius)).filter((c): c is number => c !== null);
    const max = num(thermal.max_cpu_celsius) ?? (readings.length ? Math.max(...readings) : null);
    if (max !== null) return { celsius: max, source: text(thermal.source, 64) ?? 'thermal', lv: base };
  }
  let hottest: Reading | null = null;
  for (const s of sensors(ipmiOf(input))) {
    if (!/cpu|processor/i.test(s.name) || !(s.type.includes('temp') || /degree|celsius/.test(s.unit))) continue;
    if (s.value === null || isAbsent(s.status)) continue;
    const upper = num(s.s.upper_critical);
    const lv: Levels = {
      warning: num(override?.warning) ?? (upper !== null ? upper - 15 : base.warning),
      critical: num(override?.critical) ?? (upper !== null ? upper - 5 : base.critical),
    };
    const reading = { celsius: s.value, source: `IPMI ${s.name}`, lv };
    if (!hottest || rank(reading) > rank(hottest) || (rank(reading) === rank(hottest) && reading.celsius > hottest.celsius)) hottest = reading;
  }
  return hottest;
}

const SEVERITY_RANK = { critical: 3, warning: 2, info: 1 } as const;
/** Which reading to report: the one in the worst state, not simply the hottest (levels differ per sensor). */
const rank = (r: Reading) => { const s = atOrAbove(r.celsius, r.lv); return s ? SEVERITY_RANK[s] : 0; };

interface Gpu { key: string; gpu: Obj }

function gpus(input: RuleInput): Gpu[] | null {
  const block = obj(input.snapshot.gpu);
  if (!block || block.available === false) return null;
  const out: Gpu[] = [];
  for (const gpu of objects(block.devices)) {
    const index = num(gpu.index);
    const key = index !== null ? String(index) : text(gpu.uuid, 64);
    if (key !== null) out.push({ key, gpu });
  }
  return out.length > 0 ? out : null;
}

const gpuName = (g: Gpu) => `GPU ${g.key}${text(g.gpu.name, 64) ? ` (${text(g.gpu.name, 64)})` : ''}`;
function power(g: Gpu): string {
  const draw = num(g.gpu.power_draw_w);
  const limit = num(g.gpu.power_limit_w);
  return draw === null ? '' : ` at ${fmt(draw, 0)} W${limit !== null ? ` of ${fmt(limit, 0)} W` : ''}`;
}
const NVIDIA_SMI = (key: string, what: string) => `nvidia-smi -i ${/^\d+$/.test(key) ? key : '<index>'} -q -d ${what}`;

const GPU_RULES: RuleDefinition[] = [
  defineRule({
    alert_type: 'gpu_thermal_critical', kind: 'state', category: 'hardware', subject: 'gpu index', boot_grace_seconds: 300,
    description: 'A GPU runs hot; it throttles and, near its shutdown temperature, stops.',
    thresholds: { warning: 85, critical: 92, unit: '°C' },
    guidance: 'Check `nvidia-smi -q -d TEMPERATURE,PERFORMANCE` for the slowdown and shutdown temperatures, then the fans, airflow, blanking panels and the room\'s inlet temperature.',
    check(input) {
      const list = gpus(input);
      if (!list) return null;
      const lv = levels(input, 'gpu_thermal_critical', { warning: 85, critical: 92 });
      const out: Draft[] = [];
      for (const g of list) {
        const temp = num(g.gpu.temperature_c);
        const severity = temp === null ? null : atOrAbove(temp, lv);
        if (!severity || temp === null) continue;
        out.push({
          subject: g.key, severity,
          title: `${gpuName(g)} at ${fmt(temp, 0)} °C`,
          message: `${gpuName(g)} is at ${fmt(temp)} °C; the ${severity} level is ${lv[severity]} °C.`,
          evidence: { gpu_index: g.key, name: text(g.gpu.name, 64), temperature_c: temp, utilization_percent: num(g.gpu.utilization_percent), threshold: lv[severity] },
          recommendation: `Run \`${NVIDIA_SMI(g.key, 'TEMPERATURE,PERFORMANCE')}\`; check fans, airflow and the inlet temperature.`,
        });
      }
      return out;
    },
  }),
  defineRule({
    alert_type: 'gpu_power_cap_throttling', kind: 'state', category: 'hardware', subject: 'gpu index', boot_grace_seconds: 300,
    description: 'A GPU is slowed by power: the hardware power brake (warning), or only its software power cap (info).',
    thresholds: null,
    guidance: '`nvidia-smi -q -d PERFORMANCE,POWER` shows the active reasons. The hardware power brake is asserted by the board or chassis (power delivery, PSU): check supplies and cabling. The software power cap means the GPU works at its configured limit (`nvidia-smi -pl` shows it): expected under full load.',
    check(input) {
      const list = gpus(input);
      if (!list) return null;
      const out: Draft[] = [];
      for (const g of list) {
        // Agents write reasons in snake case; older ones in nvidia-smi's words ("HW Power Brake Slowdown").
        const reasons = texts(g.gpu.throttle_reasons, 64).map((r) => r.trim().toLowerCase().replace(/[^a-z0-9]+/g, '_'));
        const brake = reasons.some((r) => r.includes('hw_power_brake'));
        const cap = reasons.some((r) => r.includes('sw_power_cap'));
        if (!brake && !cap) continue;
        out.push({
          subject: g.key, severity: brake ? 'warning' : 'info',
          title: `${gpuName(g)} throttled by ${brake ? 'the hardware power brake' : 'its power cap'}`,
          message: `${gpuName(g)} reports ${reasons.join(', ')}${power(g)}.`,
          evidence: { gpu_index: g.key, throttle_reasons: reasons, power_draw_w: num(g.gpu.power_draw_w), power_limit_w: num(g.gpu.power_limit_w) },
          recommendation: brake
            ? `Run \`${NVIDIA_SMI(g.key, 'PERFORMANCE,POWER')}\`; the power brake comes from the board or chassis: check power supplies and GPU power cabling.`
            : `Run \`${NVIDIA_SMI(g.key, 'PERFORMANCE,POWER')}\`; the GPU runs at its power limit (\`nvidia-smi -pl\`), expected under full load.`,
        });
      }
      return out;
    },
  }),
  defineRule({
    alert_type: 'gpu_memory_exhausted', kind: 'state', category: 'hardware', subject: 'gpu index', boot_grace_seconds: 300,
    description: 'A GPU\'s memory is nearly all allocated while the GPU is idle (under 5 % utilization): memory held by an idle process.',
    thresholds: { warning: 95, unit: 'percent of GPU memory used (while under 5 % utilization)' },
    guidance: 'List the holders with `nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv` and stop or restart the idle one (a stale notebook kernel or a hung job); new jobs cannot start until it frees the memory.',
    check(input) {
      const list = gpus(input);
      if (!list) return null;
      const lv = levels(input, 'gpu_memory_exhausted', { warning: 95 });
      const out: Draft[] = [];
      for (const g of list) {
        const used = num(g.gpu.memory_used_mb);
        const total = num(g.gpu.memory_total_mb);
        const util = num(g.gpu.utilization_percent);
        if (used === null || total === null || total <= 0 || util === null || util >= 5) continue;
        const usedPct = pct(used, total);
        const severity = atOrAbove(usedPct, lv);
        if (!severity) continue;
        out.push({
          subject: g.key, severity,
          title: `${gpuName(g)} memory ${fmt(usedPct, 0)}% used while idle`,
          message: `${gpuName(g)} has ${fmt(used, 0)} of ${fmt(total, 0)} MB allocated at ${fmt(util, 0)}% utilization.`,
          evidence: { gpu_index: g.key, memory_used_mb: used, memory_total_mb: total, used_percent: usedPct, utilization_percent: util, threshold: lv[severity] },
          recommendation: 'Run `nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv` and stop or restart the idle process holding the memory.',
        });
      }
      return out;
    },
  }),
];

export const HARDWARE_RULES: RuleDefinition[] = [
  defineRule({
    alert_type: 'cpu_temperature_high', kind: 'state', category: 'hardware', subject: null, boot_grace_seconds: 60,
    description: 'The CPU runs hot (kernel thermal readings; without them, IPMI CPU sensors against their own critical threshold).',
    thresholds: { warning: 80, critical: 90, unit: '°C (IPMI without thermal readings: upper critical − 15 / − 5)' },
    guidance: 'Check `sensors` and `ipmitool sdr type Temperature`; then fans (`ipmitool sdr type Fan`), airflow and dust, the heatsink and its paste, and the room\'s temperature. Sustained heat shortens hardware life and throttles the CPU.',
    check(input) {
      const reading = cpuTemperature(input);
      if (!reading) return null;
      const severity = atOrAbove(reading.celsius, reading.lv);
      if (!severity) return [];
      const level = reading.lv[severity];
      return [{
        subject: null, severity,
        title: `CPU at ${fmt(reading.celsius, 0)} °C`,
        message: `The hottest CPU reading is ${fmt(reading.celsius)} °C (${reading.source}); the ${severity} level is ${level} °C.`,
        evidence: { celsius: reading.celsius, source: reading.source, threshold: level },
        recommendation: 'Run `sensors` and `ipmitool sdr type Temperature`; check fans (`ipmitool sdr type Fan`), airflow, dust and the heatsink.',
      }];
    },
  }),
  ...IPMI_RULES,
  ...GPU_RULES,
];
