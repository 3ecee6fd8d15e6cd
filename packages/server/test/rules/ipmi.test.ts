import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rememberSnapshot } from '../../src/rules/memory.js';
import type { RuleMemory } from '../../src/rules/types.js';
import { NOW, absentAndNull, evaluate, graceCases, input, table } from './support.js';

const HOUR = 3_600_000;
const ago = (hours: number) => new Date(NOW.getTime() - hours * HOUR).toISOString();
const memory = (extra: Partial<RuleMemory> = {}): RuleMemory => ({ received_at: ago(0.1), uptime_seconds: 86_000, ecc_correctable: [], sel_seen: [], ...extra });
const ipmi = (extra: Record<string, unknown>) => ({ ipmi: { available: true, sensors: [], fans: [], sel_events_recent: [], ...extra } });
const sensor = (name: string, status: string, extra: Record<string, unknown> = {}) => ({ name, status, value: 1, unit: 'discrete', type: 'Power Supply', ...extra });

describe('ecc_errors: correctable count rose by ≥ 10 within 24 h warning; uncorrectable > 0 critical; 120 s boot grace', () => {
  const ecc = (correctable: number | null, uncorrectable: number | null = 0) => ipmi({ ecc_errors: { correctable, uncorrectable } });
  const history = (...entries: Array<[number, number]>) => ({ previous: memory({ ecc_correctable: entries.map(([h, c]) => [ago(h), c] as [string, number]) }) });
  table('ecc_errors', [
    ['no history: a count alone is no rise', ecc(500), 'clear'],
    ['rose by 9 in an hour', ecc(9), 'clear', history([1, 0])],
    ['rose by 10 in an hour', ecc(10), 'warning', history([1, 0])],
    ['rose by 10 in steps within 24 h', ecc(10), 'warning', history([23, 0], [12, 4], [2, 7])],
    ['the rise before the window does not count (baseline 5 at 25 h)', ecc(14), 'clear', history([30, 0], [25, 5])],
    ['… and 10 after it does', ecc(15), 'warning', history([30, 0], [25, 5])],
    ['a reset (reboot) starts a new baseline: 5 + 6 = 11', ecc(6), 'warning', history([3, 50], [2, 55], [1, 0])],
    ['uncorrectable 1', ecc(0, 1), 'critical'],
    ['uncorrectable outranks the rise', ecc(30, 2), 'critical', history([1, 0])],
    ['both counts null', ecc(null, null), 'skip'],
    ['ecc_errors null', ipmi({ ecc_errors: null }), 'skip'],
    ['ipmi not available', { ipmi: { available: false, ecc_errors: { correctable: 0, uncorrectable: 3 } } }, 'skip'],
    ...absentAndNull('ipmi'),
    ...graceCases(120, ecc(0, 1), 'critical'),
    ['override warning 20: rose by 15', ecc(15), 'clear', { ...history([1, 0]), thresholds: { ecc_errors: { warning: 20 } } }],
  ]);

  it('memory that went bad in storage is ignored, not fatal', () => {
    const junk = { received_at: 'x', uptime_seconds: null, ecc_correctable: [['nope', 1], 'x', [ago(1), 'a'], null], sel_seen: 'x' } as unknown as RuleMemory;
    assert.deepEqual(evaluate('ecc_errors', input(ecc(40), { previous: junk })), []);
  });
});

describe('ipmi_sensor_critical: a sensor whose status is critical or non-recoverable', () => {
  const one = (status: string, extra: Record<string, unknown> = {}) => ipmi({ sensors: [sensor('12V', status, { unit: 'Volts', type: 'Voltage', ...extra })] });
  table('ipmi_sensor_critical', [
    ['ok', one('ok'), 'clear'],
    ['nc (non-critical)', one('nc'), 'clear'],
    ['ns (no reading)', one('ns'), 'clear'],
    ['cr', one('cr'), [['12V', 'critical']]],
    ['nr', one('nr'), 'critical'],
    ['ucr (ipmitool sensor)', one('ucr'), 'critical'],
    ['lnr', one('lnr'), 'critical'],
    ['"critical" in words, any case', one('Critical'), 'critical'],
    ['a fan at cr is ipmi_fan_failure\'s', ipmi({ sensors: [sensor('FAN1', 'cr', { unit: 'RPM', type: 'Fan', value: 300 })] }), 'clear'],
    ['no sensors', ipmi({}), 'skip'],
    ['ipmi not available', { ipmi: { available: false, sensors: [sensor('12V', 'cr')] } }, 'skip'],
    ...absentAndNull('ipmi'),
  ]);

  it('two critical sensors are two findings', () => {
    const found = evaluate('ipmi_sensor_critical', input(ipmi({ sensors: [sensor('12V', 'cr'), sensor('5V', 'ok'), sensor('CPU1 Temp', 'nr', { value: 101, type: 'Temperature', unit: 'degrees C', upper_critical: 100 })] })))!;
    assert.deepEqual(found.map((f) => f.subject), ['12V', 'CPU1 Temp']);
    assert.equal(found[1]!.evidence.upper_critical, 100);
    assert.match(found[1]!.recommendation, /ipmitool sensor get 'CPU1 Temp'/);
  });
});

describe('ipmi_fan_failure: a fan at 0 RPM or critical status, absent fans excluded; 60 s boot grace', () => {
  const fan = (rpm: number | null, status: string) => ipmi({ fans: [{ name: 'FAN1', rpm, status }] });
  const fanSensor = (value: number | null, status: string) => ipmi({ sensors: [sensor('FAN5', status, { value, unit: 'RPM', type: 'Fan' })] });
  table('ipmi_fan_failure', [
    ['5600 RPM ok', fan(5600, 'ok'), 'clear'],
    ['0 RPM', fan(0, 'ok'), [['FAN1', 'critical']]],
    ['critical status', fan(3000, 'critical'), 'critical'],
    ['cr status', fan(3000, 'cr'), 'critical'],
    ['warning status is not a failure', fan(900, 'warning'), 'clear'],
    ['absent fan at 0 RPM', fan(0, 'absent'), 'clear'],
    ['ns fan at 0 RPM', fan(0, 'ns'), 'clear'],
    ['a fan sensor not in the fan list, at 0 RPM', fanSensor(0, 'ok'), [['FAN5', 'critical']]],
    ['an empty fan header (sensor ns, no value)', fanSensor(null, 'ns'), 'clear'],
    ['no fans at all', ipmi({ sensors: [sensor('12V', 'ok')] }), 'skip'],
    ...absentAndNull('ipmi'),
    ...graceCases(60, fan(0, 'ok'), 'critical'),
  ]);
});

describe('psu_redundancy_loss: two or more PSU sensors and one failed or absent', () => {
  const psus = (...statuses: string[]) => ipmi({ sensors: statuses.map((s, i) => sensor(`PS${i + 1} Status`, s)) });
  table('psu_redundancy_loss', [
    ['two ok', psus('ok', 'ok'), 'clear'],
    ['one failed (cr)', psus('ok', 'cr'), 'critical'],
    ['one absent (ns)', psus('ok', 'ns'), 'critical'],
    ['one reporting a failure in words', psus('ok', 'Failure detected'), 'critical'],
    ['a single supply that fails: no redundancy to lose', psus('cr'), 'clear'],
    ['the redundancy summary and PSU readings are not supplies', ipmi({ sensors: [
      sensor('PS1 Status', 'ok'), sensor('PS Redundancy', 'cr'), sensor('PS2 Temperature', 'ns', { unit: 'degrees C', type: 'Temperature' }),
    ] }), 'clear'],
    ['no sensors', ipmi({}), 'skip'],
    ...absentAndNull('ipmi'),
  ]);
});

describe('ipmi_sel_critical (event): a critical, asserted SEL event not seen before', () => {
  const event = (extra: Record<string, unknown> = {}) => ({ id: '00d5', timestamp: ago(2), sensor: 'Power Supply #0xc5', event: 'Power Supply AC lost', severity: 'critical', asserted: true, ...extra });
  const sel = (...events: unknown[]) => ipmi({ sel_events_recent: events });
  const seenBefore = (...events: unknown[]) => ({ previous: rememberSnapshot(input(sel(...events), { previous: memory() })) });
  table('ipmi_sel_critical', [
    ['new, critical, asserted', sel(event()), 'critical', { previous: memory() }],
    ['deasserted', sel(event({ asserted: false })), 'clear', { previous: memory() }],
    ['warning severity', sel(event({ severity: 'warning' })), 'clear', { previous: memory() }],
    ['assertion unknown', sel(event({ asserted: null })), 'clear', { previous: memory() }],
    ['older agents: direction Asserted', sel(event({ asserted: undefined, direction: 'Asserted' })), 'critical', { previous: memory() }],
    ['seen in the previous snapshot', sel(event()), 'clear', seenBefore(event())],
    ['the same id after a SEL clear, at another time', sel(event({ timestamp: ago(1) })), 'critical', seenBefore(event())],
    ['first snapshot: an event of the last 24 h', sel(event({ timestamp: ago(23) })), 'critical'],
    ['first snapshot: an older event is only remembered', sel(event({ timestamp: ago(25) })), 'clear'],
    ['first snapshot: an event with an unreadable time', sel(event({ timestamp: 'Pre-Init' })), 'clear'],
    ['later snapshots raise old-dated new events (BMC clocks drift)', sel(event({ timestamp: '2019-01-01T00:00:00Z' })), 'critical', { previous: memory() }],
    ['no events list', ipmi({ sel_events_recent: null }), 'skip'],
    ...absentAndNull('ipmi'),
  ]);

  it('several new events are one finding (host-wide) listing them', () => {
    const found = evaluate('ipmi_sel_critical', input(sel(event(), event({ id: '00d6', event: 'Uncorrectable ECC', sensor: 'Memory' })), { previous: memory() }))!;
    assert.equal(found.length, 1);
    assert.equal(found[0]!.subject, null);
    assert.equal(found[0]!.title, '2 new critical BMC events');
    assert.equal((found[0]!.evidence.events as unknown[]).length, 2);
  });
});

describe('ipmi_sel_full: sel_entries_count ≥ 3,000', () => {
  const count = (n: number | null) => ipmi({ sel_entries_count: n });
  table('ipmi_sel_full', [
    ['2,999', count(2_999), 'clear'],
    ['3,000', count(3_000), 'warning'],
    ['3,001', count(3_001), 'warning'],
    ['count null (the VM fixture)', count(null), 'skip'],
    ...absentAndNull('ipmi'),
    ['override warning 500: 600', count(600), 'warning', { thresholds: { ipmi_sel_full: { warning: 500 } } }],
  ]);
});

describe('cmos_battery_low: a VBAT / CMOS battery sensor below 2.6 V', () => {
  const vbat = (value: number | null, extra: Record<string, unknown> = {}) => ipmi({ sensors: [sensor('VBAT', 'ok', { value, unit: 'Volts', type: 'Voltage', ...extra })] });
  table('cmos_battery_low', [
    ['2.61 V', vbat(2.61), 'clear'],
    ['2.6 V (not below)', vbat(2.6), 'clear'],
    ['2.59 V', vbat(2.59), 'warning'],
    ['named CMOS Battery', vbat(2.4, { name: 'CMOS Battery' }), 'warning'],
    ['a discrete battery sensor has no voltage', vbat(2.4, { unit: 'discrete' }), 'skip'],
    ['no reading', vbat(null, { status: 'ns' }), 'skip'],
    ['no battery sensor', ipmi({ sensors: [sensor('12V', 'ok', { unit: 'Volts', value: 1 })] }), 'skip'],
    ...absentAndNull('ipmi'),
    ['override warning 2.8: 2.7 V', vbat(2.7), 'warning', { thresholds: { cmos_battery_low: { warning: 2.8 } } }],
  ]);
});
