import { MINUTE_MS, iso } from '../lib/clock.js';
import { rollupRepo } from '../features/health/rollup-repo.js';
import {
  RESOLUTION_MS, ROLLUP_RESOLUTIONS, ROLLUP_SOURCE, addSample, bucketStartMs, mergeStats, parseStats, parseValues, type BucketStats, type RollupResolution,
} from '../features/health/rollups.js';
import type { Store } from '../store/db.js';
import type { Job } from './scheduler.js';

/**
 * How long after a 5-minute bucket ends its raw samples are taken as
 * complete: a sample is stamped when its request arrives and commits a
 * moment later, and processes sharing PostgreSQL may disagree on the time a
 * little. A sample that arrives later than this in a rolled bucket stays
 * in the raw history only.
 */
export const ROLLUP_LAG_MS = MINUTE_MS;

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Builds the 5m, 1h and 1d rollups from closed buckets, off the ingest path:
 * 5m from the raw samples, 1h from the 5m buckets, 1d from the 1h buckets.
 * Each resolution remembers how far it got; a run rolls every bucket closed
 * since, skipping stretches without data, one bucket (all servers) at a time
 * with the event loop free between statements. Reads of history fill in the
 * part not rolled yet from finer data, so lag here never shows as a gap.
 */
export function metricsRollupJob(store: Pick<Store, 'db'>): Job {
  const repo = rollupRepo(store.db);

  async function source(resolution: RollupResolution, from: string, to: string): Promise<Map<string, BucketStats>> {
    const byServer = new Map<string, BucketStats>();
    const statsOf = (serverId: string) => {
      let stats = byServer.get(serverId);
      if (!stats) byServer.set(serverId, (stats = {}));
      return stats;
    };
    const finer = ROLLUP_SOURCE[resolution];
    if (finer === '1m') {
      for (const row of await repo.samplesBetween(from, to)) addSample(statsOf(row.server_id), parseValues(row.metrics));
    } else {
      for (const row of await repo.rollupsBetween(finer, from, to)) mergeStats(statsOf(row.server_id), parseStats(row.stats));
    }
    return byServer;
  }

  const firstSource = (resolution: RollupResolution, from: string) => {
    const finer = ROLLUP_SOURCE[resolution];
    return finer === '1m' ? repo.firstSample(from) : repo.firstRollup(finer, from);
  };

  /** Rolls the buckets of one resolution that end at or before `sourceFinalUntil`; returns how far this resolution is final. */
  async function roll(resolution: RollupResolution, sourceFinalUntil: number): Promise<number> {
    const size = RESOLUTION_MS[resolution];
    const end = bucketStartMs(sourceFinalUntil, resolution);
    const stored = await repo.progress(resolution);
    let at = stored === null ? 0 : Date.parse(stored);
    while (at < end) {
      const next = await firstSource(resolution, iso(new Date(at)));
      if (next === null || Date.parse(next) >= end) {
        at = end;
        break;
      }
      const bucket = bucketStartMs(Date.parse(next), resolution);
      const stats = await source(resolution, iso(new Date(bucket)), iso(new Date(bucket + size)));
      const rows = [...stats].filter(([, s]) => Object.keys(s).length > 0).map(([serverId, s]) => ({ server_id: serverId, stats: JSON.stringify(s) }));
      await repo.upsert(resolution, iso(new Date(bucket)), rows, yieldToEventLoop);
      at = bucket + size;
      await repo.advance(resolution, iso(new Date(at)));
    }
    if (stored === null || at > Date.parse(stored)) await repo.advance(resolution, iso(new Date(at)));
    return at;
  }

  return {
    name: 'metrics-rollup',
    intervalMs: MINUTE_MS,
    async run(now) {
      let finalUntil = now.getTime() - ROLLUP_LAG_MS;
      for (const resolution of ROLLUP_RESOLUTIONS) finalUntil = await roll(resolution, finalUntil);
    },
  };
}
