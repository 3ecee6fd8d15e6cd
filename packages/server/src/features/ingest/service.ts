import type { Transaction } from 'kysely';
import { ApiError } from '../../http/errors.js';
import { invalidCollectorKey } from '../../http/auth.js';
import { addMs, iso, type Clock } from '../../lib/clock.js';
import type { Database } from '../../store/schema.js';
import { extractMetrics } from '../health/metrics.js';
import { storedMetricsJson } from '../health/metrics-repo.js';
import type { ClaimedServer, IngestRepo } from './repo.js';
import { serverFacts } from './server-facts.js';
import type { SnapshotBody } from './snapshot-schema.js';

/** One push per server per 55 seconds (spec, Limits). */
export const INGEST_GATE_MS = 55_000;

export interface AlertCounts {
  newAlerts: number;
  activeAlerts: number;
  /** What the rules keep of this snapshot for the next one (JSON text), stored with the latest snapshot. */
  ruleMemory: string | null;
}

/**
 * The seam for the alert engine. It runs inside the ingest transaction,
 * after the server row is claimed (which locks it) and before the latest
 * snapshot is replaced, so its alert changes commit or roll back with the
 * snapshot.
 */
export interface SnapshotAlerts {
  evaluate(tx: Transaction<Database>, input: { server: ClaimedServer; snapshot: SnapshotBody; receivedAt: string }): Promise<AlertCounts>;
}

/** No alert engine (tests of ingest alone): nothing is raised, nothing is active. */
export const noAlerts: SnapshotAlerts = {
  evaluate: async () => ({ newAlerts: 0, activeAlerts: 0, ruleMemory: null }),
};

export function tooFrequent(seconds: number): ApiError {
  return new ApiError('ingest_too_frequent',
    `this server pushed a snapshot less than ${INGEST_GATE_MS / 1000} seconds ago; retry in ${seconds} s`, [], seconds);
}

export function ingestService(deps: { repo: IngestRepo; clock: Clock; alerts?: SnapshotAlerts }) {
  const { repo, clock } = deps;
  const alerts = deps.alerts ?? noAlerts;

  /**
   * Why a claim matched no row: no live server holds the key (401), or the
   * gate is closed (429 with the seconds left, rounded up). Null when
   * neither holds any more: the row changed in between, worth one more try.
   */
  async function refusal(keyHash: string, now: Date): Promise<ApiError | null> {
    const holder = await repo.findByKeyHash(keyHash);
    if (!holder || holder.trashed_at !== null) return invalidCollectorKey();
    if (holder.last_ingest_at === null) return null;
    const waitMs = Date.parse(holder.last_ingest_at) + INGEST_GATE_MS - now.getTime();
    return waitMs > 0 ? tooFrequent(Math.ceil(waitMs / 1000)) : null;
  }

  return {
    /**
     * Accepts one snapshot. `raw` is the body's JSON text, stored as sent
     * (unknown fields included) without serialising it again. `now`: the
     * receive time, given by a gate in front (gate.ts) that judged this time.
     */
    async ingest(keyHash: string, snapshot: SnapshotBody, raw: string, now = clock.now()) {
      const receivedAt = iso(now);
      const claim = { keyHash, now: receivedAt, gateOpenAtOrBefore: iso(addMs(now, -INGEST_GATE_MS)), facts: serverFacts(snapshot) };
      // One stored form for the latest snapshot and the history sample: same numbers, serialised once.
      const metrics = storedMetricsJson(extractMetrics(snapshot));

      for (let attempt = 0; attempt < 2; attempt++) {
        const counts = await repo.transaction(async (tx) => {
          const server = await repo.claim(tx, claim);
          if (!server) return null;
          const found = await alerts.evaluate(tx, { server, snapshot, receivedAt });
          await repo.saveLatest(tx, server.id, receivedAt, raw, metrics, found.ruleMemory);
          await repo.saveSample(tx, server.id, receivedAt, metrics);
          return found;
        });
        if (counts) {
          return { success: true as const, received_at: receivedAt, new_alerts: counts.newAlerts, active_alerts: counts.activeAlerts };
        }
        const error = await refusal(keyHash, now);
        if (error) throw error;
      }
      // The row kept changing under us (restored, rotated, pushed to); the agent retries on its next interval.
      throw tooFrequent(1);
    },

    /** GET /ingest: agents check that their key works; nothing is recorded. */
    async check(keyHash: string) {
      const holder = await repo.findByKeyHash(keyHash);
      if (!holder || holder.trashed_at !== null) throw invalidCollectorKey();
      return { success: true as const, server: { id: holder.id, name: holder.name } };
    },
  };
}

export type IngestService = ReturnType<typeof ingestService>;
