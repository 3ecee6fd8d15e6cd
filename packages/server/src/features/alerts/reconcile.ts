import type { AlertKind, Evaluation, Finding, Severity } from '../../rules/types.js';
import type { AlertRow, NewAlertFields, ResolvedBy } from './records.js';

/**
 * Alert types that any snapshot clears, whatever the rules evaluated: the
 * watchdog raises server_unreachable, and a snapshot is proof of life.
 */
export const CLEARED_BY_ANY_SNAPSHOT: ReadonlySet<string> = new Set(['server_unreachable']);

export interface ReconcileInput {
  /** The server's active alerts. */
  active: readonly AlertRow[];
  evaluation: Evaluation;
  /** Muted alert types of the server. */
  muted: ReadonlySet<string>;
  /** Alert types the server's profile silences. */
  silenced: ReadonlySet<string>;
  /** The catalog's kind of an alert type (undefined for a type the catalog does not know). */
  kindOf(alertType: string): AlertKind | undefined;
  /** Receive time of the snapshot, ISO. */
  now: string;
}

/** What one snapshot changes; every row is the alert as it is after the change. */
export interface Decisions {
  /** New alerts (their id is given when they are stored). */
  raise: NewAlertFields[];
  /** Event alerts that got a new occurrence: notify again. */
  stack: AlertRow[];
  /** State alerts whose condition still holds; `changed` when more than last_seen_at moved. No notification. */
  update: Array<{ alert: AlertRow; changed: boolean }>;
  resolve: AlertRow[];
}

const RANK: Record<Severity, number> = { info: 1, warning: 2, critical: 3 };

export const keyOf = (alertType: string, subject: string | null): string => `${alertType}\u0000${subject ?? ''}`;

/** One finding per key, the most severe, in the order the rules produced them. */
function findingsByKey(findings: readonly Finding[]): Map<string, Finding> {
  const byKey = new Map<string, Finding>();
  for (const finding of findings) {
    const key = keyOf(finding.alert_type, finding.subject);
    const seen = byKey.get(key);
    if (!seen || RANK[finding.severity] > RANK[seen.severity]) byKey.set(key, finding);
  }
  return byKey;
}

function resolved(alert: AlertRow, by: ResolvedBy, now: string): AlertRow {
  return { ...alert, status: 'resolved', resolved_at: now, resolved_by: by };
}

/**
 * Decides, from the active alerts and one snapshot's evaluation, which
 * alerts to raise, stack, update and resolve. Pure: the engine stores the
 * decisions and writes the notifications.
 *
 * - A finding with no active alert of its key raises one, unless its type
 *   is muted or silenced by the profile (then it is neither raised nor
 *   notified).
 * - An active event alert with a finding stacks: one more occurrence,
 *   acknowledgement cleared. An active state alert with a finding is
 *   refreshed (severity, texts, evidence; last_seen_at moves).
 * - An active state alert whose type was evaluated and has no finding for
 *   its subject resolves ('condition'); server_unreachable resolves on any
 *   snapshot. Event alerts without a finding are left to the 24-hour expiry.
 * - An active alert of a muted or silenced type resolves ('mute'): it can
 *   only exist if the mute raced with an earlier snapshot.
 * - A type that was not evaluated (block absent, boot grace) keeps its
 *   active alerts as they are: a missing block is not evidence of health.
 */
export function reconcile(input: ReconcileInput): Decisions {
  const { evaluation, now } = input;
  const suppressed = (type: string) => input.muted.has(type) || input.silenced.has(type);
  const findings = findingsByKey(evaluation.findings);
  const decisions: Decisions = { raise: [], stack: [], update: [], resolve: [] };
  const handled = new Set<string>();

  for (const alert of input.active) {
    const key = keyOf(alert.alert_type, alert.subject);
    handled.add(key);
    const finding = findings.get(key);
    if (suppressed(alert.alert_type)) {
      decisions.resolve.push(resolved(alert, 'mute', now));
    } else if (finding && alert.kind === 'event') {
      decisions.stack.push({
        ...alert,
        ...texts(finding),
        occurrences: alert.occurrences + 1,
        last_seen_at: now,
        acknowledged: 0,
        acknowledged_at: null,
      });
    } else if (finding) {
      const next = { ...alert, ...texts(finding), last_seen_at: now };
      const changed = (['severity', 'title', 'message', 'evidence', 'recommendation'] as const).some((f) => next[f] !== alert[f]);
      decisions.update.push({ alert: next, changed });
    } else if (CLEARED_BY_ANY_SNAPSHOT.has(alert.alert_type)) {
      decisions.resolve.push(resolved(alert, 'condition', now));
    } else if (alert.kind === 'state' && evaluation.evaluated.has(alert.alert_type)) {
      decisions.resolve.push(resolved(alert, 'condition', now));
    }
  }

  for (const [key, finding] of findings) {
    if (handled.has(key) || suppressed(finding.alert_type)) continue;
    decisions.raise.push({
      alert_type: finding.alert_type,
      subject: finding.subject,
      kind: input.kindOf(finding.alert_type) ?? 'state',
      ...texts(finding),
      occurrences: 1,
      first_seen_at: now,
      last_seen_at: now,
    });
  }
  return decisions;
}

/** The parts of an alert a finding sets; evidence is stored as JSON text. */
function texts(finding: Finding) {
  return {
    severity: finding.severity,
    title: finding.title,
    message: finding.message,
    evidence: JSON.stringify(finding.evidence),
    recommendation: finding.recommendation,
  };
}
