import type { Kysely } from 'kysely';
import type { Database } from '../../store/schema.js';
import type { RollupResolution } from './rollups.js';

/** Rows per insert statement: 4 values each stays far below both dialects' parameter limits. */
const UPSERT_CHUNK_ROWS = 500;

/**
 * The queries of the metrics-rollup job. Every read is a range on an index:
 * raw samples by ts, rollups by (resolution, bucket).
 */
export function rollupRepo(db: Kysely<Database>) {
  return {
    async progress(resolution: RollupResolution): Promise<string | null> {
      const row = await db.selectFrom('metric_rollup_progress').select('rolled_until').where('resolution', '=', resolution).executeTakeFirst();
      return row?.rolled_until ?? null;
    },

    /** Moves the progress forward, never back: two processes running the job on one PostgreSQL may finish out of order. */
    async advance(resolution: RollupResolution, rolledUntil: string): Promise<void> {
      await db.insertInto('metric_rollup_progress').values({ resolution, rolled_until: rolledUntil })
        .onConflict((oc) => oc.column('resolution')
          .doUpdateSet({ rolled_until: (eb) => eb.ref('excluded.rolled_until') })
          .where('metric_rollup_progress.rolled_until', '<', rolledUntil))
        .execute();
    },

    /** The time of the first raw sample at or after `from`, or null. */
    async firstSample(from: string): Promise<string | null> {
      const row = await db.selectFrom('metric_samples').select('ts').where('ts', '>=', from).orderBy('ts').limit(1).executeTakeFirst();
      return row?.ts ?? null;
    },

    /** The start of the first bucket of `resolution` at or after `from`, or null. */
    async firstRollup(resolution: RollupResolution, from: string): Promise<string | null> {
      const row = await db.selectFrom('metric_rollups').select('bucket')
        .where('resolution', '=', resolution).where('bucket', '>=', from).orderBy('bucket').limit(1).executeTakeFirst();
      return row?.bucket ?? null;
    },

    /** Every server's raw samples with from <= ts < to. */
    samplesBetween(from: string, to: string): Promise<Array<{ server_id: string; metrics: string }>> {
      return db.selectFrom('metric_samples').select(['server_id', 'metrics']).where('ts', '>=', from).where('ts', '<', to).execute();
    },

    /** Every server's rollups of `resolution` starting in [from, to). */
    rollupsBetween(resolution: RollupResolution, from: string, to: string): Promise<Array<{ server_id: string; stats: string }>> {
      return db.selectFrom('metric_rollups').select(['server_id', 'stats'])
        .where('resolution', '=', resolution).where('bucket', '>=', from).where('bucket', '<', to).execute();
    },

    /**
     * Writes one bucket for many servers, replacing what is there: the job
     * recomputes a bucket whole from its source, so running it twice (or in
     * two processes) writes the same rows. Each chunk is its own statement
     * and the caller yields between them, so ingest is never held back long.
     */
    async upsert(resolution: RollupResolution, bucket: string, rows: Array<{ server_id: string; stats: string }>, between: () => Promise<void>): Promise<void> {
      for (let i = 0; i < rows.length; i += UPSERT_CHUNK_ROWS) {
        await db.insertInto('metric_rollups')
          .values(rows.slice(i, i + UPSERT_CHUNK_ROWS).map((row) => ({ server_id: row.server_id, resolution, bucket, stats: row.stats })))
          .onConflict((oc) => oc.columns(['server_id', 'resolution', 'bucket']).doUpdateSet((eb) => ({ stats: eb.ref('excluded.stats') })))
          .execute();
        await between();
      }
    },
  };
}

export type RollupRepo = ReturnType<typeof rollupRepo>;
