import { iso } from '../../lib/clock.js';
import { pickedBucket, pickedValues, rollupBuckets, type Bucket } from './history.js';
import type { MetricValues } from './metrics.js';
import type { HealthRepo } from './repo.js';
import { RESOLUTION_MS, ROLLUP_SOURCE, addSample, bucketStartMs, mergeStats, parseValues, type Resolution, type RollupResolution } from './rollups.js';

const alignUp = (ms: number, resolution: Resolution) => Math.ceil(ms / RESOLUTION_MS[resolution]) * RESOLUTION_MS[resolution];

/** Groups timed items (oldest first) into buckets of one resolution. */
function group<T>(items: T[], resolution: Resolution, timeOf: (item: T) => string, add: (stats: Bucket['stats'], item: T) => void): Bucket[] {
  const buckets: Bucket[] = [];
  let last: Bucket | undefined;
  for (const item of items) {
    const t = iso(new Date(bucketStartMs(Date.parse(timeOf(item)), resolution)));
    if (last?.t !== t) {
      last = { t, stats: {} };
      buckets.push(last);
    }
    add(last.stats, item);
  }
  return buckets;
}

/**
 * Reads the buckets of one server's history. Rollups are built by the
 * metrics-rollup job from closed buckets only, so the newest part of any
 * range (a bucket still open, or one the job has not reached) is not in the
 * rollup table yet: it is computed here from the next finer level, down to
 * the raw samples. A query thus answers the same whether or not the job has
 * run, and reads few rows when it has.
 *
 * `names` picks series in SQL (null: every series, for the per-mount disk metric).
 */
export function historyBuckets(repo: HealthRepo, serverId: string, names: readonly string[] | null) {
  async function samples(from: string, to: string): Promise<Array<{ ts: string; values: MetricValues }>> {
    return names
      ? (await repo.sampleSeries(serverId, from, to, names)).map((row) => pickedValues(row, names))
      : (await repo.samples(serverId, from, to)).map((row) => ({ ts: row.ts, values: parseValues(row.metrics) }));
  }

  async function rollups(resolution: RollupResolution, from: string, to: string): Promise<Bucket[]> {
    return names
      ? (await repo.rollupSeries(serverId, resolution, from, to, names)).map((row) => pickedBucket(row, names))
      : rollupBuckets(await repo.rollups(serverId, resolution, from, to));
  }

  /** Buckets starting in [fromMs, toMs), oldest first, each whole (a bucket may hold data past toMs). */
  async function read(resolution: Resolution, fromMs: number, toMs: number): Promise<Bucket[]> {
    const first = alignUp(fromMs, resolution);
    const end = alignUp(toMs, resolution);
    if (first >= end) return [];
    if (resolution === '1m') {
      return group(await samples(iso(new Date(first)), iso(new Date(end))), '1m', (s) => s.ts, (stats, s) => addSample(stats, s.values));
    }
    const rolled = await rollups(resolution, iso(new Date(first)), iso(new Date(end)));
    const last = rolled.at(-1);
    const unrolledFrom = last ? Date.parse(last.t) + RESOLUTION_MS[resolution] : first;
    if (unrolledFrom >= end) return rolled;
    const finer = await read(ROLLUP_SOURCE[resolution], unrolledFrom, end);
    return rolled.concat(group(finer, resolution, (b) => b.t, (stats, b) => mergeStats(stats, b.stats)));
  }

  return { read };
}
