import { sql, type Expression, type Kysely, type Transaction } from 'kysely';
import type { Dialect } from '../../store/db.js';
import { iso } from '../../lib/clock.js';
import type { Database } from '../../store/schema.js';
import type { MetricValues } from './metrics.js';
import { ROLLUP_RESOLUTIONS, addSample, bucketStartMs, parseStats, storedValues, type BucketStats, type RollupResolution } from './rollups.js';

export type Executor = Kysely<Database> | Transaction<Database>;

/** A snapshot's metrics as stored: each value rounded to 4 decimals, and that as JSON text. */
export interface StoredSample {
  values: MetricValues;
  json: string;
}

export function storedSample(metricValues: MetricValues): StoredSample {
  const values = storedValues(metricValues);
  return { values, json: JSON.stringify(values) };
}

/** Stores one snapshot's metric values; see recordStoredSample. */
export function recordSample(db: Executor, serverId: string, at: Date, metricValues: MetricValues): Promise<void> {
  return recordStoredSample(db, serverId, at, storedSample(metricValues));
}

/**
 * Stores the metric values of one accepted snapshot: the raw sample and its
 * share of the 5m, 1h and 1d rollups. Called by ingest inside its
 * transaction; the ingest gate guarantees one writer per server at a time.
 *
 * The rollups are read, merged in JS and written back (three statements in
 * all, whatever the number of series). That read-merge-write is only safe
 * because of that gate: no second snapshot of the same server can update
 * the same bucket rows concurrently. Without the gate two writers would lose
 * one another's counts.
 */
export async function recordStoredSample(db: Executor, serverId: string, at: Date, sample: StoredSample): Promise<void> {
  const { values } = sample;
  await db.insertInto('metric_samples').values({ server_id: serverId, ts: iso(at), metrics: sample.json }).execute();
  if (Object.keys(values).length === 0) return;

  const ms = at.getTime();
  const buckets = new Map<RollupResolution, string>(ROLLUP_RESOLUTIONS.map((r) => [r, iso(new Date(bucketStartMs(ms, r)))]));
  // resolution IN (…) AND bucket IN (…) is a few primary-key probes on both
  // dialects; SQLite plans an OR of three (resolution, bucket) pairs as a
  // search on server_id alone, reading all of the server's rollups. The extra
  // combinations the IN lists match (an hour start is also a 5-minute start)
  // are dropped below.
  const rows = await db.selectFrom('metric_rollups').select(['resolution', 'bucket', 'stats'])
    .where('server_id', '=', serverId)
    .where('resolution', 'in', [...ROLLUP_RESOLUTIONS])
    .where('bucket', 'in', [...new Set(buckets.values())])
    .execute();
  const current = new Map<RollupResolution, BucketStats>();
  for (const row of rows) {
    if (buckets.get(row.resolution) === row.bucket) current.set(row.resolution, parseStats(row.stats));
  }

  await db.insertInto('metric_rollups')
    .values(ROLLUP_RESOLUTIONS.map((resolution) => ({
      server_id: serverId,
      resolution,
      bucket: buckets.get(resolution)!,
      stats: JSON.stringify(addSample(current.get(resolution) ?? {}, values)),
    })))
    .onConflict((oc) => oc.columns(['server_id', 'resolution', 'bucket']).doUpdateSet((eb) => ({ stats: eb.ref('excluded.stats') })))
    .execute();
}

/**
 * Deletes one batch of rows picked by `batch` (a select of the physical row
 * id), returning how many went. Each dialect gets the form it runs as an
 * index range plus direct row access: SQLite `rowid IN (…)`, PostgreSQL
 * `ctid = ANY(ARRAY(…))`. PostgreSQL plans the portable
 * `(server_id, ts) IN (…)` as a hash join over the whole table, which would
 * scan every sample for every batch.
 */
async function deleteBatch(db: Executor, table: 'metric_samples' | 'metric_rollups', dialect: Dialect, batch: Expression<unknown>): Promise<number> {
  const result = dialect === 'postgres'
    ? await db.deleteFrom(table).where(sql`ctid`, '=', sql`any(array(${batch}))`).executeTakeFirst()
    : await db.deleteFrom(table).where(sql`rowid`, 'in', batch).executeTakeFirst();
  return Number(result.numDeletedRows);
}

const rowId = (dialect: Dialect) => sql.raw<unknown>(dialect === 'postgres' ? 'ctid' : 'rowid').as('row_id');

/** Deletes up to `limit` raw samples taken before `cutoff`, oldest first (through the ts index); returns how many went. */
export function deleteSamplesBefore(db: Executor, dialect: Dialect, cutoff: string, limit: number): Promise<number> {
  return deleteBatch(db, 'metric_samples', dialect, db.selectFrom('metric_samples').select(rowId(dialect))
    .where('ts', '<', cutoff).orderBy('ts').limit(limit));
}

/** Deletes up to `limit` rollups of one resolution whose bucket starts at or before `lastBucket`; returns how many went. */
export function deleteRollupsThrough(db: Executor, dialect: Dialect, resolution: RollupResolution, lastBucket: string, limit: number): Promise<number> {
  return deleteBatch(db, 'metric_rollups', dialect, db.selectFrom('metric_rollups').select(rowId(dialect))
    .where('resolution', '=', resolution).where('bucket', '<=', lastBucket).orderBy('bucket').limit(limit));
}
