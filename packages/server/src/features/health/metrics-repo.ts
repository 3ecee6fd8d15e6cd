import { sql, type Expression, type Kysely, type Transaction } from 'kysely';
import type { Dialect } from '../../store/db.js';
import { iso } from '../../lib/clock.js';
import type { Database } from '../../store/schema.js';
import type { MetricValues } from './metrics.js';
import { storedValues, type RollupResolution } from './rollups.js';

export type Executor = Kysely<Database> | Transaction<Database>;

/** A snapshot's metrics as stored: each value rounded to 4 decimals, as JSON text. */
export function storedMetricsJson(metricValues: MetricValues): string {
  return JSON.stringify(storedValues(metricValues));
}

/**
 * Stores one raw sample outside ingest (tests, bench); ingest writes its
 * samples through its own repo, inside the push's transaction.
 */
export async function recordSample(db: Executor, serverId: string, at: Date, metricValues: MetricValues): Promise<void> {
  await db.insertInto('metric_samples').values({ server_id: serverId, ts: iso(at), metrics: storedMetricsJson(metricValues) }).execute();
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
