import type { ColumnType, Generated } from 'kysely';

/**
 * Column conventions shared by both dialects: timestamps are ISO-8601 UTC
 * strings with milliseconds (they sort as text), booleans are integers 0/1,
 * lists and objects are JSON text.
 */
type Timestamp = string;
type Flag = number;
type Json = string;

export interface AccountsTable {
  id: string;
  created_at: Timestamp;
}

export interface UsersTable {
  id: string;
  account_id: string;
  email: string;
  email_normalized: string;
  name: string;
  password_hash: string;
  verified: Flag;
  role: string;
  created_at: Timestamp;
}

export interface EmailVerificationsTable {
  token_hash: string;
  user_id: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
}

export interface SessionsTable {
  id: string;
  user_id: string;
  account_id: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  revoked_at: Timestamp | null;
  reauth_until: Timestamp | null;
}

export interface AccountKeysTable {
  id: string;
  account_id: string;
  user_id: string;
  name: string;
  prefix: string;
  secret_hash: string;
  scopes: Json;
  capabilities: Json;
  created_at: Timestamp;
  expires_at: Timestamp | null;
  last_used_at: Timestamp | null;
  revoked_at: Timestamp | null;
  reauth_until: Timestamp | null;
}

export interface LegacySubscriptionsTable {
  account_id: string;
  plan: string;
  has_default_payment_method: Flag;
  current_period_end: Timestamp | null;
  cancel_at_period_end: Flag;
  billing_enforcement_exempt: Flag;
  free_server_quota: number;
}

export interface ServersTable {
  id: string;
  account_id: string;
  name: string;
  name_is_placeholder: Flag;
  hostname: string | null;
  tags: Json;
  profile: string | null;
  ip: string | null;
  os_type: string | null;
  os_version: string | null;
  status: string;
  suspended_at: Timestamp | null;
  suspended_reason: string | null;
  last_seen_at: Timestamp | null;
  collector_version: string | null;
  disk_health_rollup: string;
  dmi_vendor: string | null;
  dmi_product: string | null;
  ipmi_sensors_count: number | null;
  config_overrides: Json;
  free_analysis_used: Flag;
  collector_key_hash: string;
  key_rotated_at: Timestamp | null;
  created_at: Timestamp;
  trashed_at: Timestamp | null;
  last_ingest_at: Timestamp | null;
  /** config_overrides.interval_seconds as a column, so SQL can use it; null means the default. */
  push_interval_seconds: ColumnType<number | null, number | null | undefined, number | null>;
  /** Epoch ms at which the server counts as unreachable unless it reports before; moved by every snapshot. */
  unreachable_at_ms: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface ServerTagsTable {
  server_id: string;
  account_id: string;
  tag: string;
}

export interface IdempotencyKeysTable {
  account_id: string;
  idem_key: string;
  request_hash: string;
  state: 'in_flight' | 'done';
  status_code: number | null;
  response_body: string | null;
  created_at: Timestamp;
  locked_until: Timestamp;
  expires_at: Timestamp;
}

export interface LatestSnapshotsTable {
  server_id: string;
  received_at: Timestamp;
  /** The snapshot as the agent sent it, unknown fields included. */
  snapshot: Json;
  /** The metric values extracted from it (MetricValues). */
  metrics: Json;
  /** What the alert rules keep for the next snapshot (RuleMemory); null before the alert engine saw one. */
  rule_memory: ColumnType<Json | null, Json | null | undefined, Json | null>;
}

export interface MetricSamplesTable {
  server_id: string;
  ts: Timestamp;
  metrics: Json;
}

export interface MetricRollupsTable {
  server_id: string;
  resolution: '5m' | '1h' | '1d';
  /** Start of the bucket. */
  bucket: Timestamp;
  /** Per series `[count, sum, min, max]`. */
  stats: Json;
}

export interface AlertsTable {
  id: string;
  account_id: string;
  server_id: string;
  alert_type: string;
  subject: string | null;
  /** subject, or '' for host-wide alerts: the unique index of active alerts needs a non-null key. */
  subject_key: string;
  kind: 'state' | 'event';
  severity: 'critical' | 'warning' | 'info';
  status: 'active' | 'resolved';
  title: string;
  message: string;
  evidence: Json;
  recommendation: string;
  occurrences: number;
  first_seen_at: Timestamp;
  last_seen_at: Timestamp;
  resolved_at: Timestamp | null;
  resolved_by: 'condition' | 'manual' | 'mute' | 'ttl' | null;
  acknowledged: Flag;
  acknowledged_at: Timestamp | null;
}

export interface ServerMutesTable {
  server_id: string;
  alert_type: string;
  created_at: Timestamp;
}

export type OutboxEvent = 'alert.raised' | 'alert.occurred' | 'alert.resolved';

export interface NotificationOutboxTable {
  /** A store sequence: the order in which the events were committed. */
  id: Generated<number>;
  account_id: string;
  server_id: string;
  alert_id: string;
  event: OutboxEvent;
  /** `{alert, server: {id, name, hostname, tags}}` as they were when the event happened. */
  payload: Json;
  created_at: Timestamp;
  /** Set by the delivery worker once every channel has the message; null while it is pending. */
  dispatched_at: ColumnType<Timestamp | null, Timestamp | null | undefined, Timestamp | null>;
  /** Set by the delivery worker when it has planned one delivery task per enabled channel. */
  fanned_out_at: ColumnType<Timestamp | null, Timestamp | null | undefined, Timestamp | null>;
}

/** pending: an attempt is due at next_attempt_at; the others are final. skipped: silenced (acknowledged) or the channel was disabled. */
export type DeliveryTaskState = 'pending' | 'sent' | 'failed' | 'skipped';

/** One notification (outbox row) to one channel, between its attempts; `deliveries` holds the attempts. */
export interface DeliveryTasksTable {
  /** The delivery id shared by every attempt (the webhook-id). */
  delivery_id: string;
  outbox_id: number;
  channel_id: string;
  account_id: string;
  state: DeliveryTaskState;
  /** Attempts made so far. */
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: Timestamp;
  /** The lease of the worker sending it now; a lease past claimed_until is free to take. */
  claim_id: string | null;
  claimed_until: Timestamp | null;
}

export interface ChannelsTable {
  id: string;
  account_id: string;
  name: string;
  channel_type: string;
  /** The whole config, sealed (AES-256-GCM, key from SECRET_KEY, bound to the channel id). */
  config: string;
  enabled: Flag;
  created_at: Timestamp;
  updated_at: Timestamp;
  last_delivery_at: Timestamp | null;
  last_delivery_status: DeliveryStatus | null;
}

/** sent: delivered; retrying: failed, another attempt is planned; failed: final, no attempt follows. */
export type DeliveryStatus = 'sent' | 'retrying' | 'failed';

/** One attempt to deliver one notification to one channel. */
export interface DeliveriesTable {
  /** The delivery (notification × channel), shared by its attempts; sent as `webhook-id`. */
  id: string;
  /** 1 for the first attempt. */
  attempt: number;
  channel_id: string;
  account_id: string;
  /** The notification_outbox row delivered; null for `POST /channels/:id/test`. */
  outbox_id: number | null;
  alert_id: string | null;
  event: string;
  status: DeliveryStatus;
  http_status: number | null;
  smtp_reply: string | null;
  error: string | null;
  duration_ms: number;
  created_at: Timestamp;
  /** When status is retrying: the earliest time of the next attempt. */
  next_attempt_at: Timestamp | null;
}

export interface MetricRollupProgressTable {
  resolution: '5m' | '1h' | '1d';
  /** Every bucket of this resolution starting before this time is final. */
  rolled_until: Timestamp;
}

export interface Database {
  accounts: AccountsTable;
  users: UsersTable;
  email_verifications: EmailVerificationsTable;
  sessions: SessionsTable;
  account_keys: AccountKeysTable;
  legacy_subscriptions: LegacySubscriptionsTable;
  servers: ServersTable;
  server_tags: ServerTagsTable;
  idempotency_keys: IdempotencyKeysTable;
  latest_snapshots: LatestSnapshotsTable;
  metric_samples: MetricSamplesTable;
  metric_rollups: MetricRollupsTable;
  metric_rollup_progress: MetricRollupProgressTable;
  alerts: AlertsTable;
  server_mutes: ServerMutesTable;
  notification_outbox: NotificationOutboxTable;
  channels: ChannelsTable;
  deliveries: DeliveriesTable;
  delivery_tasks: DeliveryTasksTable;
}

// Re-exported so repos can type generated columns later without importing kysely directly.
export type { ColumnType, Generated };
