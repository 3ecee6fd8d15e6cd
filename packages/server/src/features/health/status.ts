/** Health status values of the contract. */
export type HealthStatus = 'pending' | 'healthy' | 'warning' | 'critical' | 'offline';

/** The agent's default push interval (spec: 300 seconds). */
export const DEFAULT_INTERVAL_SECONDS = 300;
/** A server is offline after this many push intervals without a snapshot. */
export const MISSED_INTERVALS_OFFLINE = 3;

/** config_overrides.interval_seconds when it is a positive number, else the default. */
export function pushIntervalSeconds(configOverrides: string): number {
  try {
    const parsed = JSON.parse(configOverrides) as { interval_seconds?: unknown } | null;
    const value = parsed?.interval_seconds;
    if (typeof value === 'number' && Number.isFinite(value) && value > 0) return value;
  } catch {
    // a malformed column falls back to the default
  }
  return DEFAULT_INTERVAL_SECONDS;
}

export interface StatusInput {
  /** Time of the latest snapshot; null before the first. */
  lastSeenMs: number | null;
  nowMs: number;
  intervalSeconds: number;
  /** Worst severity among the server's active alerts (the alerts feature supplies it). */
  worstActiveSeverity: 'warning' | 'critical' | null;
}

/**
 * pending (no snapshot yet), offline (no snapshot for 3 push intervals;
 * offline from the instant the third interval has fully passed), else the
 * worst active alert (critical, warning), else healthy.
 */
export function healthStatus(input: StatusInput): HealthStatus {
  if (input.lastSeenMs === null) return 'pending';
  if (input.nowMs - input.lastSeenMs >= MISSED_INTERVALS_OFFLINE * input.intervalSeconds * 1000) return 'offline';
  return input.worstActiveSeverity ?? 'healthy';
}
