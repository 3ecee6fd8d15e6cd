import { sql, type Kysely } from 'kysely';

// Frozen in time: never imports application code, never changes once released.

export async function up(db: Kysely<any>): Promise<void> {
  // Set when the worker has planned the row's deliveries (one task per enabled channel of the account):
  // the channel list is snapshotted once, so a channel added later does not get an old alert.
  await db.schema.alterTable('notification_outbox').addColumn('fanned_out_at', 'text').execute();
  await db.schema.createIndex('notification_outbox_fanout_idx').on('notification_outbox').column('id')
    .where(sql.ref('fanned_out_at'), 'is', null)
    .execute();

  // The state of one delivery (one outbox row to one channel) between its attempts; `deliveries` keeps
  // the history of attempts. claim_id/claimed_until are a lease: a worker that dies mid-send loses its
  // claim when the lease runs out, and a late worker cannot finish a task another one has claimed since.
  await db.schema
    .createTable('delivery_tasks')
    .addColumn('delivery_id', 'text', (c) => c.primaryKey())
    .addColumn('outbox_id', 'bigint', (c) => c.notNull())
    .addColumn('channel_id', 'text', (c) => c.notNull().references('channels.id').onDelete('cascade'))
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text', (c) => c.notNull())
    .addColumn('claim_id', 'text')
    .addColumn('claimed_until', 'text')
    .addUniqueConstraint('delivery_tasks_outbox_channel_key', ['outbox_id', 'channel_id'])
    .execute();
  // Only pending tasks are ever looked for by time; finished ones stay out of the index.
  await db.schema.createIndex('delivery_tasks_due_idx').on('delivery_tasks').column('next_attempt_at')
    .where(sql.ref('state'), '=', 'pending')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('delivery_tasks').execute();
  await db.schema.dropIndex('notification_outbox_fanout_idx').execute();
  await db.schema.alterTable('notification_outbox').dropColumn('fanned_out_at').execute();
}
