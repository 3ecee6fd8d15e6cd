import type { SnapshotBody } from '../features/ingest/snapshot-schema.js';

/**
 * The contract between the alert rules (pure functions over a snapshot) and
 * the alerts feature (which keeps alerts in the store). Rules never see the
 * store; the alerts feature never looks inside a snapshot.
 */

export type Severity = 'critical' | 'warning' | 'info';
export type AlertKind = 'state' | 'event';
export type RuleCategory = 'host' | 'storage' | 'network' | 'hardware' | 'security' | 'lifecycle';

/** One condition a rule found in one snapshot, about one subject. */
export interface Finding {
  alert_type: string;
  /** The mount, device, interface, pool, sensor or GPU index; null for host-wide rules. */
  subject: string | null;
  severity: Severity;
  title: string;
  message: string;
  /** The numbers and names the finding rests on, for the operator and the notification. */
  evidence: Record<string, unknown>;
  /** What to run or check. */
  recommendation: string;
}

/** `config_overrides.thresholds`: per alert type, replacement warning and critical levels. */
export type ThresholdOverrides = Record<string, { warning?: number; critical?: number }>;

/**
 * What the engine remembers of a server's earlier snapshots, so rules can
 * compare without reading old snapshots: built by `rememberSnapshot`,
 * stored by the alerts feature as JSON next to the server, handed back as
 * `previous` with the next snapshot. Plain JSON values only.
 */
export interface RuleMemory {
  /** Receive time of the snapshot this memory was taken from (ISO). */
  received_at: string;
  uptime_seconds: number | null;
  /**
   * [receive time ISO, correctable ECC count] within the last 24 h, oldest
   * first. Only changes of the count are kept, plus the last entry older than
   * 24 h as the baseline the first change in the window is measured from.
   */
  ecc_correctable: Array<[string, number]>;
  /** Ids (or stable keys) of critical SEL events already seen, bounded. */
  sel_seen: string[];
}

export interface RuleInput {
  snapshot: SnapshotBody;
  /** Null for a server's first snapshot. */
  previous: RuleMemory | null;
  thresholds: ThresholdOverrides;
  /** Receive time of this snapshot (from the injected clock). */
  now: Date;
  /** `MIN_AGENT_VERSION`: below it `agent_outdated` is raised. */
  minAgentVersion: string;
}

/** Levels a rule exposes in `GET /alert-rules` and accepts in config overrides; null when the rule has no numeric level. */
export interface RuleThresholds {
  warning?: number;
  critical?: number;
  info?: number;
  /** Unit or meaning of the numbers, e.g. "percent used". */
  unit?: string;
}

export interface RuleDefinition {
  alert_type: string;
  kind: AlertKind;
  category: RuleCategory;
  /** What the alert means, one sentence, shown in the catalog and docs. */
  description: string;
  /** What to do about it, for the docs page of the alert type (findings carry their own, specific recommendation). */
  guidance?: string;
  /** What a subject names (`mount`, `device`, ...), or null for host-wide rules. */
  subject: string | null;
  thresholds: RuleThresholds | null;
  /** Seconds after boot during which the rule is not evaluated. */
  boot_grace_seconds?: number;
  /**
   * The findings for this snapshot, or null when the rule was not evaluated
   * (its block absent or null, or boot grace): its active alerts then stay
   * as they are. An empty list means evaluated and clear: its state alerts resolve.
   * Rules evaluated outside snapshots (server_unreachable) have no evaluate.
   */
  evaluate?(input: RuleInput): Finding[] | null;
}

/** The result of running every rule on one snapshot. */
export interface Evaluation {
  findings: Finding[];
  /** Alert types whose rule was evaluated (so absence of a finding means clear). */
  evaluated: Set<string>;
}
