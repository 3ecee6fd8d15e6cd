import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Frozen in time: never imports application code, never changes once released.

export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;

  await db.schema
    .createTable('alerts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('server_id', 'text', (c) => c.notNull().references('servers.id').onDelete('cascade'))
    .addColumn('alert_type', 'text', (c) => c.notNull())
    .addColumn('subject', 'text')
    // subject with '' for null: NULLs never collide in a unique index, and one active alert per key must be enforced.
    .addColumn('subject_key', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('severity', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('evidence', 'text', (c) => c.notNull())
    .addColumn('recommendation', 'text', (c) => c.notNull())
    .addColumn('occurrences', 'integer', (c) => c.notNull())
    .addColumn('first_seen_at', 'text', (c) => c.notNull())
    .addColumn('last_seen_at', 'text', (c) => c.notNull())
    .addColumn('resolved_at', 'text')
    .addColumn('resolved_by', 'text')
    .addColumn('acknowledged', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('acknowledged_at', 'text')
    .execute();
  // The store itself refuses a second active alert for one (server, type, subject), whoever writes it.
  // The predicates are literal SQL so both dialects can match them against queries that spell status = 'active'.
  await db.schema.createIndex('alerts_one_active_idx').on('alerts')
    .columns(['server_id', 'alert_type', 'subject_key']).unique()
    .where(sql.ref('status'), '=', sql.lit('active'))
    .execute();
  await db.schema.createIndex('alerts_server_list_idx').on('alerts').columns(['server_id', 'first_seen_at', 'id']).execute();
  await db.schema.createIndex('alerts_event_expiry_idx').on('alerts').column('last_seen_at')
    .where((eb) => eb.and([eb(sql.ref('status'), '=', sql.lit('active')), eb(sql.ref('kind'), '=', sql.lit('event'))]))
    .execute();

  // One row per muted rule: adding and removing are single statements, so concurrent requests cannot lose one.
  await db.schema
    .createTable('server_mutes')
    .addColumn('server_id', 'text', (c) => c.notNull().references('servers.id').onDelete('cascade'))
    .addColumn('alert_type', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('server_mutes_pk', ['server_id', 'alert_type'])
    .execute();

  // What the alert rules keep from the previous snapshot, replaced by the same upsert as the snapshot.
  await db.schema.alterTable('latest_snapshots').addColumn('rule_memory', 'text').execute();

  // The server_unreachable watchdog reads one indexed column instead of parsing every server's settings:
  // the instant (epoch ms) at which a server that has not reported counts as unreachable, and
  // config_overrides.interval_seconds mirrored as a column so the ingest claim can move that instant in SQL.
  await db.schema.alterTable('servers').addColumn('push_interval_seconds', 'integer').execute();
  await db.schema.alterTable('servers').addColumn('unreachable_at_ms', 'bigint').execute();
  // Existing servers: 3 default intervals (900 s) after their last snapshot, or 20 minutes after registration.
  const epochMs = (column: string) => postgres
    ? sql`(extract(epoch from ${sql.ref(column)}::timestamptz) * 1000)::bigint`
    : sql`cast(round((julianday(${sql.ref(column)}) - 2440587.5) * 86400000) as integer)`;
  await sql`update servers set unreachable_at_ms = case
    when last_seen_at is not null then ${epochMs('last_seen_at')} + 900000
    else ${epochMs('created_at')} + 1200000 end`.execute(db);
  await db.schema.createIndex('servers_unreachable_idx').on('servers').column('unreachable_at_ms').execute();

  // The notification outbox: written in the transaction that changes the alert; the delivery worker claims
  // undispatched rows in id order. The id is a store sequence, so rows of one alert keep their commit order.
  await db.schema
    .createTable('notification_outbox')
    .addColumn('id', postgres ? 'bigint' : 'integer', (c) => (postgres ? c.primaryKey().generatedByDefaultAsIdentity() : c.primaryKey().autoIncrement()))
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('server_id', 'text', (c) => c.notNull())
    .addColumn('alert_id', 'text', (c) => c.notNull().references('alerts.id').onDelete('cascade'))
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('dispatched_at', 'text')
    .execute();
  await db.schema.createIndex('notification_outbox_pending_idx').on('notification_outbox').column('id')
    .where(sql.ref('dispatched_at'), 'is', null)
    .execute();
  await db.schema.createIndex('notification_outbox_alert_idx').on('notification_outbox').column('alert_id').execute();
  await db.schema.createIndex('notification_outbox_server_idx').on('notification_outbox').column('server_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('notification_outbox').execute();
  await db.schema.dropIndex('servers_unreachable_idx').execute();
  await db.schema.alterTable('servers').dropColumn('unreachable_at_ms').execute();
  await db.schema.alterTable('servers').dropColumn('push_interval_seconds').execute();
  await db.schema.alterTable('latest_snapshots').dropColumn('rule_memory').execute();
  await db.schema.dropTable('server_mutes').execute();
  await db.schema.dropTable('alerts').execute();
}
