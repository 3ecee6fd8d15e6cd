import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SnapshotBody } from '../../src/features/ingest/snapshot-schema.js';
import { MAX_FINDINGS_PER_RULE, MAX_TEXT } from '../../src/rules/common.js';
import { RULES, evaluateRules } from '../../src/rules/catalog.js';
import { rememberSnapshot } from '../../src/rules/memory.js';
import type { RuleInput, RuleMemory } from '../../src/rules/types.js';
import { NOW, checkShape, evaluate, fixture, input } from './support.js';

/** Odd values a lenient schema lets through, and some it does not (rules must not care). */
const ODD: unknown[] = [null, undefined, 0, -1, 1e308, -1e308, 0.5, '', 'x', '-1', true, false, [], [null], {}, 'x'.repeat(5000)];

/** Every path of `value`, lists cut to their first two elements so the sweep stays small. */
function paths(value: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  if (value === null || typeof value !== 'object') return [prefix];
  const entries = Array.isArray(value) ? value.slice(0, 2).map((v, i) => [i, v] as const) : Object.entries(value);
  return [prefix, ...entries.flatMap(([k, v]) => paths(v, [...prefix, k]))];
}

function withValue(base: unknown, path: Array<string | number>, value: unknown): SnapshotBody {
  const copy: any = structuredClone(base);
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key];
  const last = path.at(-1)!;
  if (value === undefined && !Array.isArray(node)) delete node[last];
  else node[last] = value;
  return copy;
}

const PREVIOUS: RuleMemory = { received_at: '2026-11-22T11:55:00.000Z', uptime_seconds: 5000, ecc_correctable: [['2026-11-22T10:00:00.000Z', 1]], sel_seen: ['abc'] };

/** Runs each rule without the catalog's safety net: a throw here is a bug in the rule. */
function everyRule(ruleInput: RuleInput, label: string, remember = true): void {
  for (const rule of RULES) {
    if (!rule.evaluate) continue;
    let found;
    try {
      found = rule.evaluate(ruleInput);
    } catch (error) {
      assert.fail(`${rule.alert_type} threw on ${label}: ${(error as Error).stack}`);
    }
    for (const f of found ?? []) checkShape(rule.alert_type, f);
  }
  if (remember) assert.doesNotThrow(() => JSON.stringify(rememberSnapshot(ruleInput)), label);
}

describe('no rule throws, whatever the snapshot holds', () => {
  for (const name of ['snapshot-vm-debian12.json', 'snapshot-baremetal.json', 'snapshot-large-host.json']) {
    it(`${name}: every path set to null, removed, or an odd value`, () => {
      const base = fixture(name);
      const all = paths(base).filter((p) => p.length > 0 && (name !== 'snapshot-large-host.json' || p.length <= 3));
      let runs = 0;
      for (const path of all) {
        for (const value of ODD) {
          const snapshot = withValue(base, path, value);
          for (const previous of [null, PREVIOUS]) {
            everyRule({ snapshot, previous, thresholds: {}, now: NOW, minAgentVersion: '0.1.0' }, `${path.join('.')} = ${String(value).slice(0, 20)}`);
            runs += 1;
          }
        }
      }
      assert.ok(runs > 500, `${runs} variants`);
    });
  }

  it('junk in the whole input: memory, thresholds, clock, minimum version', () => {
    const snapshot = fixture('snapshot-baremetal.json');
    const junkMemory = [{}, { received_at: null, ecc_correctable: null, sel_seen: null }, { ecc_correctable: [[null, null], 'x', [1, 2, 3]], sel_seen: [{}, 1] }] as unknown as RuleMemory[];
    const junkThresholds = [{ cpu_high: null }, { cpu_high: 'x' }, { cpu_high: { warning: 'x', critical: null } }, { disk_space_high: { warning: -1 } }, [] as unknown] as RuleInput['thresholds'][];
    for (const previous of junkMemory) everyRule({ snapshot, previous, thresholds: {}, now: NOW, minAgentVersion: '0.1.0' }, 'junk memory');
    for (const thresholds of junkThresholds) everyRule({ snapshot, previous: null, thresholds, now: NOW, minAgentVersion: '0.1.0' }, 'junk thresholds');
    const broken: RuleInput = { snapshot, previous: PREVIOUS, thresholds: {}, now: new Date(NaN), minAgentVersion: '' };
    everyRule(broken, 'invalid clock and version', false);
    // The clock is the caller's: an invalid one is a bug to surface, not a time to store.
    assert.throws(() => rememberSnapshot(broken), RangeError);
    everyRule({ ...input({}), snapshot: { timestamp: NOW.toISOString(), system: null } as unknown as SnapshotBody }, 'system null');
  });
});

describe('bounds against hostile snapshots', () => {
  it(`at most ${MAX_FINDINGS_PER_RULE} findings per rule, texts capped at ${MAX_TEXT} characters`, () => {
    const disks = Array.from({ length: 1024 }, (_, i) => ({ mount: `/m${i}/${'x'.repeat(4000)}`, device: '/dev/sda', percent_used: 99 }));
    const found = evaluate('disk_space_high', input({ disks }))!;
    assert.equal(found.length, MAX_FINDINGS_PER_RULE);
    for (const f of found) {
      assert.ok(f.subject!.length <= MAX_TEXT);
      assert.ok(f.title.length <= MAX_TEXT);
      assert.ok(JSON.stringify(f.evidence).length < 2_000);
    }
  });

  it('two entries with the same subject give one finding, the worse one', () => {
    const found = evaluate('disk_space_high', input({ disks: [{ mount: '/', percent_used: 86 }, { mount: '/', percent_used: 97 }, { mount: '/', percent_used: 90 }] }))!;
    assert.deepEqual(found.map((f) => [f.subject, f.severity]), [['/', 'critical']]);
  });

  it('control characters in names do not reach titles', () => {
    const [f] = evaluate('disk_space_high', input({ disks: [{ mount: '/a\nSubject: x\r\u0007', percent_used: 99 }] }))!;
    assert.doesNotMatch(f!.title, /[\n\r\u0007]/);
  });

  it('evidence lists are capped', () => {
    const units = Array.from({ length: 4000 }, (_, i) => `unit-${i}.service`);
    const [f] = evaluate('systemd_service_failed', input({ systemd: { failed_count: 4000, failed_units: units } }))!;
    assert.ok((f!.evidence.failed_units as string[]).length <= 20);
  });
});

describe('evaluateRules', () => {
  it('a rule that throws counts as not evaluated; the others still run', () => {
    const snapshot = { timestamp: NOW.toISOString(), system: { uptime_seconds: 86_400 }, memory: { total_mb: 100, available_mb: 1 } } as any;
    Object.defineProperty(snapshot, 'cpu', { enumerable: true, get() { throw new Error('hostile getter'); } });
    const errors: string[] = [];
    const evaluation = evaluateRules({ ...input({}), snapshot }, (type) => errors.push(type));
    assert.deepEqual(errors.sort(), ['cpu_high', 'cpu_iowait_high', 'load_high']);
    assert.ok(!evaluation.evaluated.has('cpu_high'));
    assert.ok(evaluation.evaluated.has('ram_high'));
    assert.deepEqual(evaluation.findings.map((f) => f.alert_type), ['ram_high']);
  });
});
