import { Migrator, sql, type Migration, type MigrationProvider } from 'kysely';
import type { Store } from './db.js';
import * as foundation from './migrations/2026-11-22T0300_foundation.js';
import * as ingestAndMetrics from './migrations/2026-11-22T0400_ingest_and_metrics.js';
import * as rollupProgress from './migrations/2026-11-22T0430_rollup_progress.js';
import * as alerts from './migrations/2026-11-22T0500_alerts.js';
import * as channels from './migrations/2026-11-22T0600_channels.js';
import * as deliveryWorker from './migrations/2026-11-22T0700_delivery_worker.js';

/** The one migration history; both dialects run the same list in the same order. */
const MIGRATIONS: Record<string, Migration> = {
  '2026-11-22T0300_foundation': foundation,
  '2026-11-22T0400_ingest_and_metrics': ingestAndMetrics,
  '2026-11-22T0430_rollup_progress': rollupProgress,
  '2026-11-22T0500_alerts': alerts,
  '2026-11-22T0600_channels': channels,
  '2026-11-22T0700_delivery_worker': deliveryWorker,
};

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

/** Applies pending migrations under the migrator's lock; throws with the failing migration's name. */
export async function migrateToLatest({ db, dialect }: Pick<Store, 'db' | 'dialect'>): Promise<string[]> {
  // On PostgreSQL the migrator looks for its own tables in any schema of the
  // search path; pinning them to the current schema keeps two deployments (or
  // two test runs) that share a database in separate schemas apart.
  const migrationTableSchema = dialect === 'postgres'
    ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema
    : undefined;
  const migrator = new Migrator({ db, provider, migrationTableSchema });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error) {
    const where = failed ? ` in ${failed.migrationName}` : '';
    throw new Error(`migration failed${where}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
