import { DAY_MS, HOUR_MS, MINUTE_MS, iso } from '../../lib/clock.js';
import { ApiError, type ErrorDetail } from '../../http/errors.js';
import { DISK_SERIES_PREFIX, type MetricValues } from './metrics.js';
import type { PickedRow } from './repo.js';
import { RESOLUTIONS, RESOLUTION_MS, addSample, bucketStartMs, parseStats, type BucketStats, type Resolution, type SeriesStats } from './rollups.js';

/** Which stored series each `metric` of the history endpoint shows, with their units. */
export const HISTORY_METRICS = {
  cpu: { series: [['cpu_percent', '%']] },
  memory: { series: [['ram_percent', '%'], ['swap_used_mb', 'MB']] },
  // Besides the fixed series: one per mount, named as stored (`disk:/var`).
  disk: { series: [['disk_max_percent', '%']], perMount: { prefix: DISK_SERIES_PREFIX, unit: '%' } },
  network: { series: [['rx_mbps', 'Mbit/s'], ['tx_mbps', 'Mbit/s']] },
  temperature: { series: [['cpu_temp_c', '°C']] },
} as const satisfies Record<string, { series: ReadonlyArray<readonly [string, string]>; perMount?: { prefix: string; unit: string } }>;

export type HistoryMetric = keyof typeof HISTORY_METRICS;
export const HISTORY_METRIC_NAMES = Object.keys(HISTORY_METRICS) as HistoryMetric[];

export const DEFAULT_RANGE_MS = HOUR_MS;
/** At most this many buckets per request: 1m covers ~6.9 days, 5m ~34 days, 1h ~416 days, 1d ~27 years. */
export const MAX_BUCKETS = 10_000;

/** Automatic resolution: range ≤ 6 h → 1m, ≤ 2 d → 5m, ≤ 60 d → 1h, else 1d (bounds inclusive). */
export function autoResolution(rangeMs: number): Resolution {
  if (rangeMs <= 6 * HOUR_MS) return '1m';
  if (rangeMs <= 2 * DAY_MS) return '5m';
  if (rangeMs <= 60 * DAY_MS) return '1h';
  return '1d';
}

const INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+\- ]\d{2}:\d{2}))?$/i;

/**
 * An ISO 8601 instant: a date-time with `Z` or an offset (seconds and
 * fractions optional), or a bare date meaning midnight UTC. A date-time
 * without zone is refused: it would silently mean the server's local time.
 * A space before the offset is read as `+`, since an unencoded `+` in a
 * query string arrives as a space. Returns epoch ms, or null when invalid.
 */
export function parseInstant(text: string): number | null {
  const m = INSTANT.exec(text);
  if (!m) return null;
  const [, year, month, day, hour = '00', minute = '00', second = '00', fraction = '', zone = 'Z'] = m;
  const millis = `${fraction.slice(1)}000`.slice(0, 3);
  const ms = Date.parse(`${year}-${month}-${day}T${hour}:${minute}:${second}.${millis}Z`);
  if (Number.isNaN(ms)) return null;
  // Date.parse rolls 2026-02-30 over into March; refuse such dates.
  if (new Date(ms).toISOString().slice(0, 10) !== `${year}-${month}-${day}`) return null;
  if (zone.toUpperCase() === 'Z') return ms;
  const oh = Number(zone.slice(1, 3));
  const om = Number(zone.slice(4, 6));
  if (oh > 23 || om > 59) return null;
  return ms - (zone[0] === '-' ? -1 : 1) * (oh * HOUR_MS + om * MINUTE_MS);
}

export interface HistoryQueryInput {
  metric: string;
  from?: string;
  to?: string;
  resolution?: string;
}

export interface HistoryPlan {
  metric: HistoryMetric;
  resolution: Resolution;
  fromMs: number;
  toMs: number;
}

/** Checks every parameter and settles defaults; all problems are reported at once as validation_failed. */
export function planHistory(query: HistoryQueryInput, now: Date): HistoryPlan {
  const details: ErrorDetail[] = [];
  const metric = query.metric as HistoryMetric;
  if (!HISTORY_METRIC_NAMES.includes(metric)) {
    details.push({ field: 'metric', issue: `must be one of: ${HISTORY_METRIC_NAMES.join(', ')}`, value: query.metric });
  }
  const explicit = query.resolution as Resolution | undefined;
  if (explicit !== undefined && !RESOLUTIONS.includes(explicit)) {
    details.push({ field: 'resolution', issue: `must be one of: ${RESOLUTIONS.join(', ')} (or omitted for automatic)`, value: query.resolution });
  }
  const instant = (field: 'from' | 'to', value: string | undefined): number | null | undefined => {
    if (value === undefined) return undefined;
    const ms = parseInstant(value);
    if (ms === null) details.push({ field, issue: 'must be an ISO 8601 date-time with a zone, such as 2026-11-22T10:00:00Z', value });
    return ms;
  };
  const fromGiven = instant('from', query.from);
  const toGiven = instant('to', query.to);
  if (fromGiven !== null && toGiven !== null) {
    const toMs = toGiven ?? now.getTime();
    const fromMs = fromGiven ?? toMs - DEFAULT_RANGE_MS;
    if (fromMs >= toMs) {
      details.push({ field: 'from', issue: `must be before to (${iso(new Date(toMs))})`, value: query.from ?? iso(new Date(fromMs)) });
    } else if (details.length === 0) {
      const resolution = explicit ?? autoResolution(toMs - fromMs);
      const buckets = Math.ceil((toMs - fromMs) / RESOLUTION_MS[resolution]);
      if (buckets <= MAX_BUCKETS) return { metric, resolution, fromMs, toMs };
      details.push({
        field: explicit ? 'resolution' : 'from',
        issue: `the range holds ${buckets} buckets of ${resolution}; at most ${MAX_BUCKETS} are served: narrow the range or choose a coarser resolution`,
        value: explicit ?? query.from,
      });
    }
  }
  throw new ApiError('validation_failed', `${details[0]!.field}: ${details[0]!.issue}`, details);
}

export interface Bucket {
  /** ISO start of the bucket. */
  t: string;
  stats: BucketStats;
}

/** The stored series a metric shows when they are a fixed list (every metric but disk, whose mounts vary). */
export function fixedSeriesNames(metric: HistoryMetric): string[] | null {
  const spec = HISTORY_METRICS[metric];
  return 'perMount' in spec ? null : spec.series.map(([name]) => name);
}

function parseJson(text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A raw sample's picked series (JSON numbers) as values. */
export function pickedValues(row: PickedRow, names: readonly string[]): { ts: string; values: MetricValues } {
  const values: MetricValues = {};
  names.forEach((name, i) => {
    const value = parseJson(row.series[i] ?? null);
    if (typeof value === 'number' && Number.isFinite(value)) values[name] = value;
  });
  return { ts: row.t, values };
}

/** A rollup's picked series (JSON `[count, sum, min, max]`) as a bucket. */
export function pickedBucket(row: PickedRow, names: readonly string[]): Bucket {
  const stats: BucketStats = {};
  names.forEach((name, i) => {
    const value = parseJson(row.series[i] ?? null);
    if (Array.isArray(value) && value.length === 4) stats[name] = value as SeriesStats;
  });
  return { t: row.t, stats };
}

export function rollupBuckets(rows: Array<{ bucket: string; stats: string }>): Bucket[] {
  return rows.map((row) => ({ t: row.bucket, stats: parseStats(row.stats) }));
}

export const round2 = (value: number) => Math.round(value * 100) / 100;

export type Point = [t: string, avg: number, min: number, max: number];
export interface Series {
  name: string;
  unit: string;
  points: Point[];
}

/**
 * The series of one metric over buckets (oldest first). The fixed series are
 * always listed, empty when nothing was recorded; a per-mount series appears
 * when the range holds a point of it. Buckets without a value are omitted.
 */
export function buildSeries(metric: HistoryMetric, buckets: Bucket[]): Series[] {
  const spec = HISTORY_METRICS[metric];
  const fixed: Series[] = spec.series.map(([name, unit]) => ({ name, unit, points: [] }));
  const perMount = 'perMount' in spec ? spec.perMount : undefined;
  const mounts = new Map<string, Series>();
  for (const { t, stats } of buckets) {
    for (const series of fixed) addPoint(series, t, stats[series.name]);
    if (!perMount) continue;
    for (const name in stats) {
      if (!name.startsWith(perMount.prefix)) continue;
      let series = mounts.get(name);
      if (!series) mounts.set(name, (series = { name, unit: perMount.unit, points: [] }));
      addPoint(series, t, stats[name]);
    }
  }
  const withData = [...mounts.values()].filter((series) => series.points.length > 0);
  return [...fixed, ...withData.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))];
}

function addPoint(series: Series, t: string, stats: SeriesStats | undefined): void {
  if (!Array.isArray(stats) || !(stats[0] > 0)) return;
  series.points.push([t, round2(stats[1] / stats[0]), round2(stats[2]), round2(stats[3])]);
}
