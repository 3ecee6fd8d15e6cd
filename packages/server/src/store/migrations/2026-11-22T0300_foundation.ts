import type { Kysely } from 'kysely';

// Frozen in time: this file never imports application code and never changes
// once released; later changes are new migrations.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('accounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('email_normalized', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('verified', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('users_account_idx').on('users').column('account_id').execute();

  await db.schema
    .createTable('email_verifications')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('used_at', 'text')
    .execute();

  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .addColumn('reauth_until', 'text')
    .execute();

  await db.schema
    .createTable('account_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('secret_hash', 'text', (c) => c.notNull().unique())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('capabilities', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text')
    .addColumn('last_used_at', 'text')
    .addColumn('revoked_at', 'text')
    .addColumn('reauth_until', 'text')
    .execute();
  await db.schema.createIndex('account_keys_account_idx').on('account_keys').columns(['account_id', 'created_at']).execute();

  await db.schema
    .createTable('legacy_subscriptions')
    .addColumn('account_id', 'text', (c) => c.primaryKey().references('accounts.id').onDelete('cascade'))
    .addColumn('plan', 'text', (c) => c.notNull())
    .addColumn('has_default_payment_method', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('current_period_end', 'text')
    .addColumn('cancel_at_period_end', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('billing_enforcement_exempt', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('free_server_quota', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  await db.schema
    .createTable('servers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_is_placeholder', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('hostname', 'text')
    .addColumn('tags', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('profile', 'text')
    .addColumn('ip', 'text')
    .addColumn('os_type', 'text')
    .addColumn('os_version', 'text')
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('active'))
    .addColumn('suspended_at', 'text')
    .addColumn('suspended_reason', 'text')
    .addColumn('last_seen_at', 'text')
    .addColumn('collector_version', 'text')
    .addColumn('disk_health_rollup', 'text', (c) => c.notNull().defaultTo('healthy'))
    .addColumn('dmi_vendor', 'text')
    .addColumn('dmi_product', 'text')
    .addColumn('ipmi_sensors_count', 'integer')
    .addColumn('config_overrides', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('free_analysis_used', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('collector_key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('key_rotated_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('trashed_at', 'text')
    .execute();
  await db.schema.createIndex('servers_account_page_idx').on('servers').columns(['account_id', 'created_at', 'id']).execute();

  await db.schema
    .createTable('server_tags')
    .addColumn('server_id', 'text', (c) => c.notNull().references('servers.id').onDelete('cascade'))
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('tag', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('server_tags_pk', ['server_id', 'tag'])
    .execute();
  await db.schema.createIndex('server_tags_lookup_idx').on('server_tags').columns(['account_id', 'tag']).execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('idem_key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('response_body', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('locked_until', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['account_id', 'idem_key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_expiry_idx').on('idempotency_keys').column('expires_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'idempotency_keys', 'server_tags', 'servers', 'legacy_subscriptions', 'account_keys',
    'sessions', 'email_verifications', 'users', 'accounts',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
