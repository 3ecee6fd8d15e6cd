import type { Transaction } from 'kysely';
import type { Logger } from 'pino';
import { evaluateRules, ruleByType } from '../../rules/catalog.js';
import { rememberSnapshot } from '../../rules/memory.js';
import { silencedTypes } from '../../rules/profiles.js';
import type { RuleInput, RuleMemory, ThresholdOverrides } from '../../rules/types.js';
import type { Database } from '../../store/schema.js';
import type { SnapshotAlerts } from '../ingest/service.js';
import { applyDecisions } from './changes-repo.js';
import { reconcile } from './reconcile.js';

const NOTHING_MUTED: ReadonlySet<string> = new Set();

function parsed<T>(json: string | null): T | null {
  if (json === null) return null;
  try {
    return JSON.parse(json) as T;
  } catch {
    // A column that no longer parses counts as absent rather than failing every push of the server.
    return null;
  }
}

/** config_overrides.thresholds; `{}` (nearly every server) is not parsed at all. */
function thresholdsOf(configOverrides: string): ThresholdOverrides {
  if (configOverrides === '{}') return {};
  const thresholds = parsed<{ thresholds?: unknown }>(configOverrides)?.thresholds;
  return thresholds !== null && typeof thresholds === 'object' ? (thresholds as ThresholdOverrides) : {};
}

/**
 * The alert engine behind ingest. Inside the ingest transaction, with the
 * server row claimed (and so locked): evaluate every rule, reconcile the
 * findings with the server's active alerts, mutes and profile, store the
 * changes with their outbox rows, and hand back what the rules keep for the
 * next snapshot. The claim already returned the active alerts, the mute
 * count and the previous memory: a healthy server without mutes costs no
 * extra statement, one whose alerts persist costs one (their last_seen_at).
 */
export function alertEngine(deps: { minAgentVersion: string; logger: Logger }): SnapshotAlerts {
  const onError = (alertType: string, err: unknown) => deps.logger.error({ err, alert_type: alertType }, 'alert rule failed; its alerts stay as they are');
  return {
    async evaluate(tx: Transaction<Database>, { server, snapshot, receivedAt }) {
      const input: RuleInput = {
        snapshot,
        previous: parsed<RuleMemory>(server.rule_memory),
        thresholds: thresholdsOf(server.config_overrides),
        now: new Date(receivedAt),
        minAgentVersion: deps.minAgentVersion,
      };
      const evaluation = evaluateRules(input, onError);
      const ruleMemory = JSON.stringify(rememberSnapshot(input));
      const { active } = server;
      if (active.length === 0 && evaluation.findings.length === 0) {
        return { newAlerts: 0, activeAlerts: 0, ruleMemory };
      }
      const muted = server.muted_rules === 0 ? NOTHING_MUTED : new Set((await tx.selectFrom('server_mutes').select('alert_type')
        .where('server_id', '=', server.id)
        .execute()).map((row) => row.alert_type));
      const decisions = reconcile({
        active,
        evaluation,
        muted,
        silenced: new Set(silencedTypes(server.profile)),
        kindOf: (type) => ruleByType(type)?.kind,
        now: receivedAt,
      });
      const { raised, resolved } = await applyDecisions(tx, server, decisions, receivedAt);
      return { newAlerts: raised, activeAlerts: active.length - resolved + raised, ruleMemory };
    },
  };
}
