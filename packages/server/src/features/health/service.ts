import { iso, type Clock } from '../../lib/clock.js';
import { notFound } from '../../http/errors.js';
import { buildSeries, fixedSeriesNames, planHistory, round2, type HistoryQueryInput } from './history.js';
import { historyBuckets } from './history-buckets.js';
import { parseValues } from './rollups.js';
import type { HealthRepo } from './repo.js';
import { healthStatus, pushIntervalSeconds } from './status.js';

/**
 * What the health endpoint needs to know about a server's alerts; the
 * alerts feature supplies it (features/alerts/active-alerts.ts). Without
 * one (tests of health alone) no alert is active.
 */
export interface ActiveAlerts {
  summary(serverId: string): Promise<{ count: number; worst: 'warning' | 'critical' | null }>;
}

export const noActiveAlerts: ActiveAlerts = {
  summary: async () => ({ count: 0, worst: null }),
};

/** `current` fields of the health answer and the stored series each one shows. */
const CURRENT_FIELDS = {
  cpu_percent: 'cpu_percent',
  ram_percent: 'ram_percent',
  swap_used_mb: 'swap_used_mb',
  disk_max_percent: 'disk_max_percent',
  network_rx_mbps: 'rx_mbps',
  network_tx_mbps: 'tx_mbps',
  cpu_temp_c: 'cpu_temp_c',
} as const;

type CurrentValues = { -readonly [K in keyof typeof CURRENT_FIELDS]: number | null };

export function healthService(deps: { repo: HealthRepo; clock: Clock; alerts?: ActiveAlerts }) {
  const { repo, clock } = deps;
  const alerts = deps.alerts ?? noActiveAlerts;

  return {
    /** Status and the latest snapshot's values; a value the snapshot did not carry is null. */
    async current(accountId: string, serverId: string) {
      const row = await repo.findServer(accountId, serverId);
      if (!row) throw notFound('server');
      const values = row.metrics === null ? {} : parseValues(row.metrics);
      const current = {} as CurrentValues;
      for (const [field, series] of Object.entries(CURRENT_FIELDS) as Array<[keyof CurrentValues, string]>) {
        const value = values[series];
        current[field] = value === undefined ? null : round2(value);
      }
      const summary = await alerts.summary(serverId);
      const lastSeen = row.last_seen_at ?? row.received_at;
      return {
        server_id: row.id,
        status: healthStatus({
          lastSeenMs: lastSeen === null ? null : Date.parse(lastSeen),
          nowMs: clock.now().getTime(),
          intervalSeconds: pushIntervalSeconds(row.config_overrides),
          worstActiveSeverity: summary.worst,
        }),
        last_seen: lastSeen,
        current: { ...current, active_alerts: summary.count },
      };
    },

    /** Time series of one metric; input is checked before the server is looked up. */
    async history(accountId: string, serverId: string, query: HistoryQueryInput) {
      const plan = planHistory(query, clock.now());
      if (!(await repo.serverExists(accountId, serverId))) throw notFound('server');
      const from = iso(new Date(plan.fromMs));
      const to = iso(new Date(plan.toMs));
      const buckets = await historyBuckets(repo, serverId, fixedSeriesNames(plan.metric)).read(plan.resolution, plan.fromMs, plan.toMs);
      return { server_id: serverId, metric: plan.metric, resolution: plan.resolution, from, to, series: buildSeries(plan.metric, buckets) };
    },
  };
}

export type HealthService = ReturnType<typeof healthService>;
