import type { Kysely } from 'kysely';

// Frozen in time: never imports application code, never changes once released.

export async function up(db: Kysely<any>): Promise<void> {
  // The 55-second gate and what the latest snapshot reported about the host.
  await db.schema.alterTable('servers').addColumn('last_ingest_at', 'text').execute();

  await db.schema
    .createTable('latest_snapshots')
    .addColumn('server_id', 'text', (c) => c.primaryKey().references('servers.id').onDelete('cascade'))
    .addColumn('received_at', 'text', (c) => c.notNull())
    .addColumn('snapshot', 'text', (c) => c.notNull())
    .addColumn('metrics', 'text', (c) => c.notNull())
    .execute();

  // One row per accepted snapshot: the numbers the history endpoint serves at 1-minute resolution.
  await db.schema
    .createTable('metric_samples')
    .addColumn('server_id', 'text', (c) => c.notNull().references('servers.id').onDelete('cascade'))
    .addColumn('ts', 'text', (c) => c.notNull())
    .addColumn('metrics', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('metric_samples_pk', ['server_id', 'ts'])
    .execute();
  await db.schema.createIndex('metric_samples_ts_idx').on('metric_samples').column('ts').execute();

  // Downsampled buckets (5m, 1h, 1d): per series count, sum, min and max, so avg = sum / count.
  await db.schema
    .createTable('metric_rollups')
    .addColumn('server_id', 'text', (c) => c.notNull().references('servers.id').onDelete('cascade'))
    .addColumn('resolution', 'text', (c) => c.notNull())
    .addColumn('bucket', 'text', (c) => c.notNull())
    .addColumn('stats', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('metric_rollups_pk', ['server_id', 'resolution', 'bucket'])
    .execute();
  await db.schema.createIndex('metric_rollups_retention_idx').on('metric_rollups').columns(['resolution', 'bucket']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('metric_rollups').execute();
  await db.schema.dropTable('metric_samples').execute();
  await db.schema.dropTable('latest_snapshots').execute();
  await db.schema.alterTable('servers').dropColumn('last_ingest_at').execute();
}
