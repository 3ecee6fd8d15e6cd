import type { Finding, RuleDefinition, RuleInput, Severity } from './types.js';

/**
 * Helpers every rule file shares: reading a lenient snapshot without
 * trusting its shapes, threshold levels with a server's overrides, and the
 * one wrapper (`defineRule`) that applies boot grace and bounds what a rule
 * can emit, so a hostile snapshot cannot produce huge or countless alerts.
 */

/** Subjects per rule: more would flood the alert list without telling the operator anything new. */
export const MAX_FINDINGS_PER_RULE = 100;
/** Any string taken from a snapshot into a subject, title or evidence. */
export const MAX_TEXT = 200;
/** Names listed in evidence (units, devices, events). */
export const MAX_LIST = 20;
const MAX_MESSAGE = 1_000;
const MAX_RECOMMENDATION = 1_500;

export type Obj = Record<string, unknown>;

export const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
export const obj = (v: unknown): Obj | null => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : null);

// Control characters would break one-line titles, e-mail subjects and terminals. A lone surrogate
// would be stored as U+FFFD, so the alert would not read back as the engine keyed it.
const CONTROL = /[\p{Cc}\p{Cs}]/gu;

/** A non-empty string, capped, control characters and lone surrogates replaced; anything else is null. */
export function text(v: unknown, max = MAX_TEXT): string | null {
  if (typeof v !== 'string') return null;
  const clean = (v.length > max ? v.slice(0, max) : v).replace(CONTROL, '\uFFFD');
  return clean.trim() === '' ? null : clean;
}

/** The object elements of a list; null elements and non-lists are skipped. */
export function objects(v: unknown): Obj[] {
  if (!Array.isArray(v)) return [];
  const out: Obj[] = [];
  for (const item of v) if (obj(item)) out.push(item as Obj);
  return out;
}

/** The string elements of a list, cleaned and capped. */
export function texts(v: unknown, maxItems = MAX_LIST): string[] {
  if (!Array.isArray(v)) return [];
  const out: string[] = [];
  for (const item of v) {
    const t = text(item);
    if (t !== null) out.push(t);
    if (out.length >= maxItems) break;
  }
  return out;
}

/** "91", "91.5", "0.06": numbers as an operator reads them in a title. */
export function fmt(n: number, digits = 1): string {
  const factor = 10 ** digits;
  const rounded = Math.round(n * factor) / factor;
  return rounded === 0 && n !== 0 ? String(Number(n.toPrecision(2))) : String(rounded);
}

export const pct = (part: number, whole: number): number => (part / whole) * 100;

/**
 * A snapshot value put into a shell command of a recommendation, or a
 * placeholder: names come from the monitored host, and an operator may paste
 * the command, so only names made of plain path characters are inlined.
 */
export function shellArg(value: string | null, placeholder: string): string {
  return value !== null && /^[A-Za-z0-9_./@:+-]+$/.test(value) && !value.startsWith('-') ? value : placeholder;
}

export interface Levels { info?: number; warning?: number; critical?: number }

/** The rule's levels with the server's `config_overrides.thresholds[type]` replacing warning and critical. */
export function levels(input: RuleInput, type: string, defaults: Levels): Levels {
  const override = obj(obj(input.thresholds)?.[type]);
  if (!override) return defaults;
  const warning = num(override.warning);
  const critical = num(override.critical);
  return { ...defaults, ...(warning !== null && { warning }), ...(critical !== null && { critical }) };
}

/** The severity of the highest level `value` reaches (value ≥ level). */
export function atOrAbove(value: number, lv: Levels): Severity | null {
  if (lv.critical !== undefined && value >= lv.critical) return 'critical';
  if (lv.warning !== undefined && value >= lv.warning) return 'warning';
  if (lv.info !== undefined && value >= lv.info) return 'info';
  return null;
}

/** The severity of the lowest level `value` falls under (value < level), for "available below" rules. */
export function below(value: number, lv: Levels): Severity | null {
  if (lv.critical !== undefined && value < lv.critical) return 'critical';
  if (lv.warning !== undefined && value < lv.warning) return 'warning';
  if (lv.info !== undefined && value < lv.info) return 'info';
  return null;
}

/** The level a severity was decided against, for evidence. */
export const levelOf = (severity: Severity, lv: Levels): number | undefined => lv[severity];

export function uptime(input: RuleInput): number | null {
  return num(obj(input.snapshot.system)?.uptime_seconds);
}

const RANK: Record<Severity, number> = { info: 1, warning: 2, critical: 3 };

/** What a rule's body returns per finding; `defineRule` adds the alert type and the bounds. */
export interface Draft {
  subject: string | null;
  severity: Severity;
  title: string;
  message: string;
  evidence: Obj;
  recommendation: string;
}

export interface RuleSpec extends Omit<RuleDefinition, 'evaluate'> {
  /** Findings (empty: evaluated and clear) or null: not evaluated. */
  check?: (input: RuleInput) => Draft[] | null;
}

/**
 * A rule from its spec: boot grace is applied here, once, and the findings
 * are bounded: one per subject (the most severe wins), at most
 * MAX_FINDINGS_PER_RULE, texts and evidence capped.
 */
export function defineRule(spec: RuleSpec): RuleDefinition {
  const { check, ...definition } = spec;
  if (!check) return definition;
  const grace = spec.boot_grace_seconds;
  return {
    ...definition,
    evaluate(input: RuleInput): Finding[] | null {
      if (grace !== undefined) {
        const up = uptime(input);
        if (up !== null && up < grace) return null;
      }
      const drafts = check(input);
      if (drafts === null) return null;
      const bySubject = new Map<string | null, Finding>();
      for (const draft of drafts) {
        const subject = draft.subject === null ? null : text(draft.subject) ?? '?';
        const seen = bySubject.get(subject);
        if (seen && RANK[seen.severity] >= RANK[draft.severity]) continue;
        if (!seen && bySubject.size >= MAX_FINDINGS_PER_RULE) continue;
        bySubject.set(subject, {
          alert_type: spec.alert_type,
          subject,
          severity: draft.severity,
          title: text(draft.title) ?? spec.alert_type,
          message: text(draft.message, MAX_MESSAGE) ?? '',
          evidence: capped(draft.evidence, 0) as Obj,
          recommendation: text(draft.recommendation, MAX_RECOMMENDATION) ?? '',
        });
      }
      return [...bySubject.values()];
    },
  };
}

/** Evidence made safe to store and send whatever a rule put in it: strings, lists and depth bounded. */
function capped(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return text(value) ?? '';
  if (value === null || typeof value !== 'object') return typeof value === 'number' && !Number.isFinite(value) ? null : value;
  if (depth >= 3) return null;
  if (Array.isArray(value)) return value.slice(0, MAX_LIST).map((v) => capped(v, depth + 1));
  const out: Obj = {};
  for (const [k, v] of Object.entries(value).slice(0, 30)) if (v !== undefined) out[k] = capped(v, depth + 1);
  return out;
}
