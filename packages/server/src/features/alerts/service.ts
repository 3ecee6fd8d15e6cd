import type { Static } from '@sinclair/typebox';
import { ApiError, notFound, validationFailed, type ErrorDetail } from '../../http/errors.js';
import { iso, type Clock } from '../../lib/clock.js';
import { ALERT_TYPES, RULES } from '../../rules/catalog.js';
import { HOST_PROFILES, profilesSilencing } from '../../rules/profiles.js';
import { parseInstant } from '../health/history.js';
import { resolveAlerts, resolveTypes } from './changes-repo.js';
import { alertView } from './records.js';
import type { AlertFilter, AlertsRepo } from './repo.js';
import { DEFAULT_PER_PAGE, type ListAlertsQuery } from './schemas.js';

const KNOWN_TYPES: ReadonlySet<string> = new Set(ALERT_TYPES);

/** The list filters, checked all at once before the server is looked up (like the health history). */
function filterOf(query: Static<typeof ListAlertsQuery>): AlertFilter {
  const details: ErrorDetail[] = [];
  const instant = (field: 'from' | 'to', value: string | undefined): string | undefined => {
    if (value === undefined) return undefined;
    const ms = parseInstant(value);
    if (ms === null) {
      details.push({ field, issue: 'must be an ISO 8601 date-time with a zone, such as 2026-11-22T10:00:00Z', value });
      return undefined;
    }
    return iso(new Date(ms));
  };
  const from = instant('from', query.from);
  const to = instant('to', query.to);
  if (from !== undefined && to !== undefined && from >= to) details.push({ field: 'from', issue: `must be before to (${to})`, value: query.from });
  if (details.length > 0) throw new ApiError('validation_failed', `${details[0]!.field}: ${details[0]!.issue}`, details);
  return {
    ...(query.status !== undefined && query.status !== 'all' && { status: query.status }),
    ...(query.severity !== undefined && { severity: query.severity }),
    ...(from !== undefined && { from }),
    ...(to !== undefined && { to }),
  };
}

function checkType(alertType: string): string {
  if (!KNOWN_TYPES.has(alertType)) {
    throw validationFailed('/alert_type', 'is not an alert type of the catalog (GET /api/v1/alert-rules lists them)', alertType.length <= 100 ? alertType : undefined);
  }
  return alertType;
}

export function alertsService(deps: { repo: AlertsRepo; clock: Clock }) {
  const { repo, clock } = deps;
  const now = () => iso(clock.now());

  async function alertOf(accountId: string, alertId: string) {
    const row = await repo.findAlert(accountId, alertId);
    if (!row) throw notFound('alert');
    return row;
  }

  async function mutesOf(serverId: string) {
    return { server_id: serverId, muted_rules: await repo.mutedTypes(serverId) };
  }

  return {
    async list(accountId: string, serverId: string, query: Static<typeof ListAlertsQuery>) {
      const filter = filterOf(query);
      if (!(await repo.serverExists(accountId, serverId))) throw notFound('server');
      const page = query.page ?? 1;
      const perPage = query.per_page ?? DEFAULT_PER_PAGE;
      const [rows, total] = await Promise.all([
        repo.list(serverId, filter, (page - 1) * perPage, perPage),
        repo.count(serverId, filter),
      ]);
      return { alerts: rows.map(alertView), page, per_page: perPage, total };
    },

    /** Silences notification of the current occurrence. A resolved alert has nothing to silence: answered unchanged. */
    async acknowledge(accountId: string, alertId: string) {
      const row = await alertOf(accountId, alertId);
      const acknowledged = row.status === 'active' ? await repo.acknowledge(row.id, now()) : undefined;
      return { success: true as const, alert: alertView(acknowledged ?? await alertOf(accountId, alertId)) };
    },

    /** Resolves by hand (notifies); an alert already resolved is answered unchanged. */
    async resolve(accountId: string, alertId: string) {
      const row = await alertOf(accountId, alertId);
      const resolved = row.status !== 'active' ? undefined : await repo.transaction(async (tx) => {
        const server = await repo.lockServer(tx, accountId, row.server_id);
        return server ? (await resolveAlerts(tx, server, [row.id], 'manual', now()))[0] : undefined;
      });
      return { success: true as const, alert: alertView(resolved ?? await alertOf(accountId, alertId)) };
    },

    async mutes(accountId: string, serverId: string) {
      if (!(await repo.serverExists(accountId, serverId))) throw notFound('server');
      return mutesOf(serverId);
    },

    /** Mutes one rule and resolves the server's active alerts of that type at once (resolved_by 'mute'). */
    async mute(accountId: string, serverId: string, alertType: string) {
      const type = checkType(alertType);
      const at = now();
      await repo.transaction(async (tx) => {
        const server = await repo.lockServer(tx, accountId, serverId);
        if (!server) throw notFound('server');
        await repo.addMute(tx, serverId, type, at);
        await resolveTypes(tx, server, [type], 'mute', at);
      });
      return mutesOf(serverId);
    },

    /** Unmutes one rule; the next snapshot may raise it again. Unmuting a rule that is not muted changes nothing. */
    async unmute(accountId: string, serverId: string, alertType: string) {
      const type = checkType(alertType);
      await repo.transaction(async (tx) => {
        if (!(await repo.lockServer(tx, accountId, serverId))) throw notFound('server');
        await repo.removeMute(tx, serverId, type);
      });
      return mutesOf(serverId);
    },

    rules() {
      return {
        rules: RULES.map((rule) => ({
          alert_type: rule.alert_type,
          kind: rule.kind,
          category: rule.category,
          description: rule.description,
          thresholds: rule.thresholds,
          silenced_by_profiles: profilesSilencing(rule.alert_type),
        })),
      };
    },

    profiles() {
      return {
        profiles: HOST_PROFILES.map((p) => ({ id: p.id, label: p.label, silenced_alert_types: [...p.silenced_alert_types] })),
      };
    },
  };
}

export type AlertsService = ReturnType<typeof alertsService>;
