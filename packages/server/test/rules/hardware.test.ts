import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { absentAndNull, evaluate, graceCases, input, table } from './support.js';

const thermal = (max: number | null, extra: Record<string, unknown> = {}) => ({ thermal: { available: true, source: 'coretemp', max_cpu_celsius: max, cpu_readings: [], ...extra } });
const cpuSensor = (value: number | null, upper: number | null = 95, name = 'CPU1 Temp') =>
  ({ name, value, unit: 'degrees C', status: 'ok', type: 'Temperature', upper_critical: upper });
const ipmi = (...sensors: unknown[]) => ({ ipmi: { available: true, sensors } });

describe('cpu_temperature_high: thermal ≥ 80 °C warning, ≥ 90 critical; else IPMI upper_critical − 15 / − 5; 60 s boot grace', () => {
  table('cpu_temperature_high', [
    ['thermal 79.9', thermal(79.9), 'clear'],
    ['thermal 80', thermal(80), 'warning'],
    ['thermal 89.9', thermal(89.9), 'warning'],
    ['thermal 90', thermal(90), 'critical'],
    ['no max: the hottest cpu reading (85)', thermal(null, { cpu_readings: [{ celsius: 70 }, { celsius: 85 }, null] }), 'warning'],
    ['IPMI, upper critical 95: 79.9', { ...thermal(null), ...ipmi(cpuSensor(79.9)) }, 'clear'],
    ['IPMI, upper critical 95: 80', { ...thermal(null), ...ipmi(cpuSensor(80)) }, 'warning'],
    ['IPMI, upper critical 95: 89.9', { ...thermal(null), ...ipmi(cpuSensor(89.9)) }, 'warning'],
    ['IPMI, upper critical 95: 90', { ...thermal(null), ...ipmi(cpuSensor(90)) }, 'critical'],
    ['IPMI, upper critical 105: 89 (below 90)', ipmi(cpuSensor(89, 105)), 'clear'],
    ['IPMI without upper critical: the thermal levels (80)', ipmi(cpuSensor(80, null)), 'warning'],
    ['IPMI when thermal is unavailable', { thermal: { available: false, max_cpu_celsius: null }, ...ipmi(cpuSensor(92)) }, 'critical'],
    ['the hottest IPMI CPU wins', ipmi(cpuSensor(50), cpuSensor(91, 95, 'CPU2 Temp')), 'critical'],
    ['IPMI sensors that are not CPUs', { ...thermal(null), ...ipmi(cpuSensor(99, 100, 'System Temp')) }, 'skip'],
    ['an absent IPMI CPU sensor', ipmi({ ...cpuSensor(0), status: 'ns', value: null }), 'skip'],
    ['thermal wins over IPMI', { ...thermal(50), ...ipmi(cpuSensor(94)) }, 'clear'],
    ['thermal without readings and no IPMI (the VM fixture)', thermal(null), 'skip'],
    ['thermal and ipmi absent', {}, 'skip'],
    ['thermal and ipmi null', { thermal: null, ipmi: null }, 'skip'],
    ...graceCases(60, thermal(95), 'critical'),
    ['override warning 70: thermal 75', thermal(75), 'warning', { thresholds: { cpu_temperature_high: { warning: 70 } } }],
    ['override warning 70 applies to IPMI as °C too', ipmi(cpuSensor(75, 100)), 'warning', { thresholds: { cpu_temperature_high: { warning: 70 } } }],
    ['override critical 95: thermal 92', thermal(92), 'warning', { thresholds: { cpu_temperature_high: { critical: 95 } } }],
  ]);

  it('names the source and the level', () => {
    const [f] = evaluate('cpu_temperature_high', input(ipmi(cpuSensor(91))))!;
    assert.equal(f!.title, 'CPU at 91 °C');
    assert.deepEqual(f!.evidence, { celsius: 91, source: 'IPMI CPU1 Temp', threshold: 90 });
  });
});

const gpu = (extra: Record<string, unknown>, available: boolean | null = true) =>
  ({ gpu: { available, devices: [{ index: 0, name: 'NVIDIA L40S', temperature_c: 50, utilization_percent: 50, memory_used_mb: 1000, memory_total_mb: 46068, throttle_reasons: [], ...extra }] } });

describe('gpu_thermal_critical: ≥ 85 °C warning, ≥ 92 critical, per GPU index; 300 s boot grace', () => {
  const temp = (celsius: number | null) => gpu({ temperature_c: celsius });
  table('gpu_thermal_critical', [
    ['84.9', temp(84.9), 'clear'],
    ['85', temp(85), [['0', 'warning']]],
    ['91.9', temp(91.9), 'warning'],
    ['92', temp(92), 'critical'],
    ['temperature null', temp(null), 'clear'],
    ['gpu not available', gpu({ temperature_c: 99 }, false), 'skip'],
    ['no devices', { gpu: { available: true, devices: [] } }, 'skip'],
    ...absentAndNull('gpu'),
    ...graceCases(300, temp(95), 'critical'),
    ['override warning 80: 82', temp(82), 'warning', { thresholds: { gpu_thermal_critical: { warning: 80 } } }],
  ]);
});

describe('gpu_power_cap_throttling: hw_power_brake warning, only sw_power_cap info; 300 s boot grace', () => {
  const reasons = (list: unknown) => gpu({ throttle_reasons: list });
  table('gpu_power_cap_throttling', [
    ['no reasons', reasons([]), 'clear'],
    ['idle', reasons(['gpu_idle']), 'clear'],
    ['sw_power_cap', reasons(['sw_power_cap']), 'info'],
    ['hw_power_brake', reasons(['hw_power_brake']), 'warning'],
    ['both: the brake decides', reasons(['sw_power_cap', 'hw_power_brake']), 'warning'],
    ["nvidia-smi's words", reasons(['HW Power Brake Slowdown']), 'warning'],
    ['reasons null', reasons(null), 'clear'],
    ...absentAndNull('gpu'),
    ...graceCases(300, reasons(['hw_power_brake']), 'warning'),
  ]);
});

describe('gpu_memory_exhausted: memory ≥ 95 % used under 5 % utilization; 300 s boot grace', () => {
  // 95 % of 10,000 MB is 9,500.
  const mem = (usedMb: number, util: number | null) => gpu({ memory_used_mb: usedMb, memory_total_mb: 10_000, utilization_percent: util });
  table('gpu_memory_exhausted', [
    ['94.99 %, idle', mem(9_499, 0), 'clear'],
    ['95 %, idle', mem(9_500, 0), 'warning'],
    ['100 %, 4.9 % busy', mem(10_000, 4.9), 'warning'],
    ['100 %, 5 % busy: in use', mem(10_000, 5), 'clear'],
    ['utilization unknown', mem(10_000, null), 'clear'],
    ...absentAndNull('gpu'),
    ...graceCases(300, mem(9_900, 0), 'warning'),
    ['override warning 90: 92 %', mem(9_200, 0), 'warning', { thresholds: { gpu_memory_exhausted: { warning: 90 } } }],
  ]);
});
