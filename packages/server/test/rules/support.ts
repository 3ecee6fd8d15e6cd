import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import type { SnapshotBody } from '../../src/features/ingest/snapshot-schema.js';
import { ruleByType } from '../../src/rules/catalog.js';
import type { Finding, RuleInput, RuleMemory, Severity, ThresholdOverrides } from '../../src/rules/types.js';

/** Shared by the rule tests: snapshots built from parts, and a table runner for one rule. */

export const NOW = new Date('2026-11-22T12:00:00.000Z');
/** A day of uptime: far past every boot grace. */
export const UP = 86_400;

export interface InputOptions {
  previous?: RuleMemory | null;
  thresholds?: ThresholdOverrides;
  now?: Date;
  minAgentVersion?: string;
  uptime?: number | null;
}

/** A snapshot with only `parts` (and a system block with a day of uptime unless told otherwise). */
export function input(parts: Record<string, unknown>, options: InputOptions = {}): RuleInput {
  const uptime = options.uptime === undefined ? UP : options.uptime;
  const snapshot = { timestamp: NOW.toISOString(), system: { uptime_seconds: uptime }, ...parts } as unknown as SnapshotBody;
  return {
    snapshot,
    previous: options.previous ?? null,
    thresholds: options.thresholds ?? {},
    now: options.now ?? NOW,
    minAgentVersion: options.minAgentVersion ?? '0.1.0',
  };
}

/** A snapshot fixture of test/fixtures, parsed afresh (tests may change it). */
export function fixture(name: string): any {
  return JSON.parse(readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8'));
}

export function evaluate(type: string, ruleInput: RuleInput): Finding[] | null {
  const rule = ruleByType(type);
  assert.ok(rule?.evaluate, `${type} has an evaluate`);
  return rule.evaluate(ruleInput);
}

/**
 * What a case expects: `skip` (not evaluated), `clear` (evaluated, nothing
 * found), one severity (one finding), or [subject, severity] pairs.
 */
export type Expected = 'skip' | 'clear' | Severity | Array<[string | null, Severity]>;

export function outcome(findings: Finding[] | null): Expected {
  if (findings === null) return 'skip';
  if (findings.length === 0) return 'clear';
  return findings.map((f) => [f.subject, f.severity] as [string | null, Severity]);
}

export function expectOutcome(type: string, ruleInput: RuleInput, expected: Expected, label = ''): Finding[] | null {
  const findings = evaluate(type, ruleInput);
  const got = outcome(findings);
  const want = typeof expected === 'string' && !['skip', 'clear'].includes(expected)
    ? [[findings?.[0]?.subject ?? null, expected]]
    : expected;
  assert.deepEqual(got, want, `${type} ${label}`);
  if (findings) for (const f of findings) checkShape(type, f);
  return findings;
}

/** Every finding is complete: the fields the contract names, non-empty texts, JSON-safe evidence. */
export function checkShape(type: string, f: Finding): void {
  assert.equal(f.alert_type, type);
  assert.ok(['critical', 'warning', 'info'].includes(f.severity));
  for (const key of ['title', 'message', 'recommendation'] as const) {
    assert.equal(typeof f[key], 'string');
    assert.ok(f[key].length > 0, `${type}: ${key} is empty`);
  }
  assert.ok(f.title.length <= 200, `${type}: title longer than 200`);
  assert.equal(typeof f.evidence, 'object');
  assert.deepEqual(JSON.parse(JSON.stringify(f.evidence)), f.evidence, `${type}: evidence survives JSON`);
}

export type Case = [label: string, parts: Record<string, unknown>, expected: Expected, options?: InputOptions];

/** One `it` per case of a rule's table. */
export function table(type: string, cases: Case[]): void {
  for (const [label, parts, expected, options] of cases) {
    it(`${label} → ${typeof expected === 'string' ? expected : JSON.stringify(expected)}`, () => {
      expectOutcome(type, input(parts, options), expected, label);
    });
  }
}

/** The common cases of a rule reading `block`: absent and null are not evaluated. */
export const absentAndNull = (block: string): Case[] => [
  [`${block} absent`, {}, 'skip'],
  [`${block} null`, { [block]: null }, 'skip'],
];

/** For a rule with boot grace: the same data is skipped just inside the grace and evaluated at its end. */
export function graceCases(grace: number, parts: Record<string, unknown>, expected: Expected): Case[] {
  return [
    [`uptime ${grace - 1} s (inside the ${grace} s boot grace)`, parts, 'skip', { uptime: grace - 1 }],
    [`uptime ${grace} s (grace over)`, parts, expected, { uptime: grace }],
  ];
}
