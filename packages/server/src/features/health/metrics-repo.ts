import type { Kysely, Transaction } from 'kysely';
import { iso } from '../../lib/clock.js';
import type { Database } from '../../store/schema.js';
import type { MetricValues } from './metrics.js';

export type Executor = Kysely<Database> | Transaction<Database>;

/**
 * Stores the metric values of one accepted snapshot. Called by ingest inside
 * its transaction; the ingest gate guarantees one writer per server at a time.
 */
export async function recordSample(db: Executor, serverId: string, at: Date, values: MetricValues): Promise<void> {
  await db.insertInto('metric_samples').values({ server_id: serverId, ts: iso(at), metrics: JSON.stringify(values) }).execute();
}
