import { DAY_MS, HOUR_MS, MINUTE_MS } from '../../lib/clock.js';
import type { MetricValues } from './metrics.js';

/** Resolutions kept as rollups in metric_rollups; `1m` is read from the raw samples. */
export const ROLLUP_RESOLUTIONS = ['5m', '1h', '1d'] as const;
export type RollupResolution = (typeof ROLLUP_RESOLUTIONS)[number];

export const RESOLUTIONS = ['1m', ...ROLLUP_RESOLUTIONS] as const;
export type Resolution = (typeof RESOLUTIONS)[number];

export const RESOLUTION_MS: Record<Resolution, number> = {
  '1m': MINUTE_MS,
  '5m': 5 * MINUTE_MS,
  '1h': HOUR_MS,
  '1d': DAY_MS,
};

/**
 * Start of the bucket holding `ms`. Epoch milliseconds carry no leap seconds
 * and the epoch is midnight UTC, so flooring aligns to 5-minute boundaries,
 * whole hours and midnight UTC.
 */
export function bucketStartMs(ms: number, resolution: Resolution): number {
  const size = RESOLUTION_MS[resolution];
  return Math.floor(ms / size) * size;
}

/** Per series `[count, sum, min, max]`: mergeable, and avg = sum / count. */
export type SeriesStats = [count: number, sum: number, min: number, max: number];
export type BucketStats = Record<string, SeriesStats>;

/**
 * Stored values keep 4 decimals: the API shows 2, and the shorter JSON makes
 * rows smaller and reading 720 hourly buckets markedly faster (number
 * parsing dominates). Sums are rounded after each addition so float noise
 * (0.1 + 0.2) does not grow the text again.
 */
export const round4 = (value: number) => Math.round(value * 10_000) / 10_000;

/** A sample's values as stored: each rounded to 4 decimals. */
export function storedValues(values: MetricValues): MetricValues {
  const stored: MetricValues = {};
  for (const name in values) stored[name] = round4(values[name]!);
  return stored;
}

/** Adds one sample's (stored) values into a bucket, in place. */
export function addSample(stats: BucketStats, values: MetricValues): BucketStats {
  for (const name in values) {
    const value = values[name]!;
    const current = stats[name];
    if (current === undefined) {
      stats[name] = [1, value, value, value];
    } else {
      current[0] += 1;
      current[1] = round4(current[1] + value);
      if (value < current[2]) current[2] = value;
      if (value > current[3]) current[3] = value;
    }
  }
  return stats;
}

/** Merges one bucket's stats into another (a finer bucket into the coarser one that holds it), in place. */
export function mergeStats(into: BucketStats, stats: BucketStats): BucketStats {
  for (const name in stats) {
    const add = stats[name]!;
    const current = into[name];
    if (current === undefined) {
      into[name] = [add[0], add[1], add[2], add[3]];
    } else {
      current[0] += add[0];
      current[1] = round4(current[1] + add[1]);
      if (add[2] < current[2]) current[2] = add[2];
      if (add[3] > current[3]) current[3] = add[3];
    }
  }
  return into;
}

/** The finer level each rollup is built from: raw samples ('1m') for 5m, 5m buckets for 1h, 1h buckets for 1d. */
export const ROLLUP_SOURCE: Record<RollupResolution, Resolution> = { '5m': '1m', '1h': '5m', '1d': '1h' };

function parseObject(text: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Reads a stored stats column; anything malformed counts as an empty bucket rather than failing ingest. */
export function parseStats(text: string): BucketStats {
  return parseObject(text) as BucketStats;
}

/** Reads a stored sample's metrics column (MetricValues), keeping only finite numbers. */
export function parseValues(text: string): MetricValues {
  const values = parseObject(text);
  for (const name in values) {
    if (typeof values[name] !== 'number' || !Number.isFinite(values[name])) delete values[name];
  }
  return values as MetricValues;
}
