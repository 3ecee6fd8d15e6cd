import type { Kysely } from 'kysely';

// Frozen in time: never imports application code, never changes once released.

export async function up(db: Kysely<any>): Promise<void> {
  // How far the metrics-rollup job has rolled each resolution: every bucket
  // starting before rolled_until is final in metric_rollups.
  await db.schema
    .createTable('metric_rollup_progress')
    .addColumn('resolution', 'text', (c) => c.primaryKey())
    .addColumn('rolled_until', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('metric_rollup_progress').execute();
}
