import type { Config } from '../config.js';
import { DAY_MS, MINUTE_MS, iso } from '../lib/clock.js';
import { deleteRollupsThrough, deleteSamplesBefore } from '../features/health/metrics-repo.js';
import { RESOLUTION_MS, type RollupResolution } from '../features/health/rollups.js';
import type { Store } from '../store/db.js';
import type { Job } from './scheduler.js';

/** Rows per delete statement: each batch is its own short transaction, so ingest is never held back for long. */
export const RETENTION_BATCH_ROWS = 1_000;

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Deletes metric history past its retention: raw samples taken before
 * now − rawDays; rollups whose whole bucket ended at or before now − days of
 * their resolution (a 1d bucket is kept until its last hour has expired).
 * Deletes go in batches until a batch comes back short; between batches the
 * event loop runs, since better-sqlite3 executes each statement
 * synchronously and ingest requests must get their turn.
 */
export function metricsRetentionJob(
  store: Pick<Store, 'db' | 'dialect'>,
  retention: Config['retention'],
  options: { batchRows?: number } = {},
): Job {
  const { db, dialect } = store;
  const batchRows = options.batchRows ?? RETENTION_BATCH_ROWS;
  const rollupDays: Record<RollupResolution, number> = {
    '5m': retention.fiveMinuteDays,
    '1h': retention.hourDays,
    '1d': retention.dayDays,
  };

  async function drain(deleteBatch: () => Promise<number>): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await deleteBatch();
      total += deleted;
      if (deleted < batchRows) return total;
      await yieldToEventLoop();
    }
  }

  return {
    name: 'metrics-retention',
    intervalMs: 10 * MINUTE_MS,
    async run(now) {
      const ago = (days: number) => now.getTime() - days * DAY_MS;
      const rawCutoff = iso(new Date(ago(retention.rawDays)));
      await drain(() => deleteSamplesBefore(db, dialect, rawCutoff, batchRows));
      for (const [resolution, days] of Object.entries(rollupDays) as Array<[RollupResolution, number]>) {
        const lastExpiredBucket = iso(new Date(ago(days) - RESOLUTION_MS[resolution]));
        await drain(() => deleteRollupsThrough(db, dialect, resolution, lastExpiredBucket, batchRows));
      }
    },
  };
}
