import { HARDWARE_RULES } from './hardware.js';
import { HOST_RULES } from './host.js';
import { LIFECYCLE_RULES } from './lifecycle.js';
import { NETWORK_RULES } from './network.js';
import { SECURITY_RULES } from './security.js';
import { STORAGE_RULES } from './storage.js';
import type { Evaluation, Finding, RuleDefinition, RuleInput } from './types.js';

/** Every rule of the catalog (shared/design/alert-rules.md), in its order. */
export const RULES: readonly RuleDefinition[] = Object.freeze([
  ...HOST_RULES,
  ...STORAGE_RULES,
  ...NETWORK_RULES,
  ...HARDWARE_RULES,
  ...SECURITY_RULES,
  ...LIFECYCLE_RULES,
]);

export const ALERT_TYPES: readonly string[] = Object.freeze(RULES.map((r) => r.alert_type));

const BY_TYPE = new Map(RULES.map((r) => [r.alert_type, r]));

export function ruleByType(type: string): RuleDefinition | undefined {
  return BY_TYPE.get(type);
}

/**
 * Runs every rule that evaluates snapshots. A rule that throws counts as not
 * evaluated, so its active alerts stay as they are and the other rules still
 * run: one odd field must not silence or resolve everything else. The rules
 * are written not to throw on any snapshot the schema accepts; this is the
 * backstop, and `onError` lets the caller log it.
 */
export function evaluateRules(input: RuleInput, onError?: (alertType: string, error: unknown) => void): Evaluation {
  const findings: Finding[] = [];
  const evaluated = new Set<string>();
  for (const rule of RULES) {
    if (!rule.evaluate) continue;
    let result: Finding[] | null;
    try {
      result = rule.evaluate(input);
    } catch (error) {
      onError?.(rule.alert_type, error);
      continue;
    }
    if (result === null) continue;
    evaluated.add(rule.alert_type);
    for (const finding of result) findings.push(finding);
  }
  return { findings, evaluated };
}
