import { ApiError, type ErrorDetail } from '../../http/errors.js';
import { ruleByType } from '../../rules/catalog.js';
import type { RuleThresholds } from '../../rules/types.js';

/** Push intervals a server may declare: from the 55-second gate's minute up to a day. */
export const INTERVAL_MIN_SECONDS = 60;
export const INTERVAL_MAX_SECONDS = 86_400;
/** Levels above this are typing mistakes for every rule of the catalog (the largest default is 60,000 ms of drift). */
export const LEVEL_MAX = 1_000_000_000;
const OVERRIDABLE = ['warning', 'critical'] as const;

export interface ConfigOverridesInput {
  thresholds?: Record<string, Record<string, unknown>>;
  interval_seconds?: number;
}

export interface ConfigOverrides {
  thresholds?: Record<string, { warning?: number; critical?: number }>;
  interval_seconds?: number;
}

/** True when a higher value is the more severe one (cpu 90 → 98); false for "alert below" rules (memory 5 → 2). */
function ascending(defaults: RuleThresholds): boolean {
  return defaults.warning === undefined || defaults.critical === undefined || defaults.warning <= defaults.critical;
}

function checkLevels(type: string, given: Record<string, unknown>, details: ErrorDetail[]): { warning?: number; critical?: number } {
  const at = `/thresholds/${type}`;
  const rule = ruleByType(type);
  if (!rule) {
    details.push({ field: at, issue: 'is not an alert type of the catalog (GET /api/v1/alert-rules lists them)' });
    return {};
  }
  const defaults = rule.thresholds;
  if (!defaults || (defaults.warning === undefined && defaults.critical === undefined)) {
    details.push({ field: at, issue: 'this rule has no numeric level to override' });
    return {};
  }
  const levels: { warning?: number; critical?: number } = {};
  for (const [key, value] of Object.entries(given)) {
    const field = `${at}/${key}`;
    if (!(OVERRIDABLE as readonly string[]).includes(key)) {
      details.push({ field, issue: 'only warning and critical can be overridden' });
    } else if (defaults[key as 'warning' | 'critical'] === undefined) {
      details.push({ field, issue: `this rule has no ${key} level` });
    } else if (typeof value !== 'number' || !Number.isFinite(value)) {
      details.push({ field, issue: 'must be a number' });
    } else if (value <= 0 || value > LEVEL_MAX) {
      details.push({ field, issue: `must be above 0 and at most ${LEVEL_MAX}`, value });
    } else if (defaults.unit?.startsWith('percent') && value > 100) {
      details.push({ field, issue: 'is a percentage: at most 100', value });
    } else {
      levels[key as 'warning' | 'critical'] = value;
    }
  }
  const warning = levels.warning ?? defaults.warning;
  const critical = levels.critical ?? defaults.critical;
  if (warning !== undefined && critical !== undefined && (levels.warning !== undefined || levels.critical !== undefined)) {
    const inOrder = ascending(defaults) ? warning <= critical : warning >= critical;
    if (!inOrder) {
      details.push({
        field: at,
        issue: `critical must stay the more severe level: with warning ${warning} and critical ${critical} the order is reversed (this rule alerts ${ascending(defaults) ? 'above' : 'below'} its levels)`,
      });
    }
  }
  return levels;
}

/**
 * Checks a config_overrides replacement against the catalog: only known
 * alert types whose rule has numeric levels, only the levels that rule has
 * (warning, critical), positive numbers (percentages up to 100) that keep
 * critical the more severe level, and an integer push interval of 60 s to a
 * day (the schema bounds it). Every problem is reported at once. Returns
 * the stored form: types without any level are left out.
 */
export function checkConfigOverrides(body: ConfigOverridesInput): ConfigOverrides {
  const details: ErrorDetail[] = [];
  const overrides: ConfigOverrides = {};
  if (body.thresholds !== undefined) {
    const thresholds: NonNullable<ConfigOverrides['thresholds']> = {};
    for (const [type, given] of Object.entries(body.thresholds)) {
      const levels = checkLevels(type, given, details);
      if (Object.keys(levels).length > 0) thresholds[type] = levels;
    }
    overrides.thresholds = thresholds;
  }
  if (body.interval_seconds !== undefined) overrides.interval_seconds = body.interval_seconds;
  if (details.length > 0) throw new ApiError('validation_failed', `${details[0]!.field}: ${details[0]!.issue}`, details);
  return overrides;
}
