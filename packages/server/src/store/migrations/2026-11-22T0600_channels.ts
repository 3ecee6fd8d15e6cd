import { sql, type Kysely } from 'kysely';

// Frozen in time: never imports application code, never changes once released.

export async function up(db: Kysely<any>): Promise<void> {
  // config is the channel's whole config as AES-256-GCM ciphertext (key from SECRET_KEY, bound to the
  // channel id): a copy of the database alone shows no bot token, routing key, webhook URL or secret.
  await db.schema
    .createTable('channels')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('channel_type', 'text', (c) => c.notNull())
    .addColumn('config', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('last_delivery_at', 'text')
    .addColumn('last_delivery_status', 'text')
    .execute();
  await db.schema.createIndex('channels_account_idx').on('channels').columns(['account_id', 'created_at', 'id']).execute();

  // One row per attempt. id is the delivery (one notification to one channel; the webhook-id), the same
  // for every attempt of it; attempt counts from 1. outbox_id names the notification_outbox row it
  // delivers (null for tests); no foreign key, so purging a server's outbox keeps the channel's history.
  await db.schema
    .createTable('deliveries')
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('channel_id', 'text', (c) => c.notNull().references('channels.id').onDelete('cascade'))
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('outbox_id', 'bigint')
    .addColumn('alert_id', 'text')
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('http_status', 'integer')
    .addColumn('smtp_reply', 'text')
    .addColumn('error', 'text')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('next_attempt_at', 'text')
    .addPrimaryKeyConstraint('deliveries_pk', ['id', 'attempt'])
    .execute();
  await db.schema.createIndex('deliveries_channel_idx').on('deliveries').columns(['channel_id', 'created_at', 'id', 'attempt']).execute();
  // The store refuses a second record of one attempt of one outbox row to one channel, whichever worker writes it.
  await db.schema.createIndex('deliveries_outbox_attempt_idx').on('deliveries')
    .columns(['outbox_id', 'channel_id', 'attempt']).unique()
    .where(sql.ref('outbox_id'), 'is not', null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('deliveries').execute();
  await db.schema.dropTable('channels').execute();
}
