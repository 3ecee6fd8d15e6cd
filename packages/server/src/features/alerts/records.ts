import type { Selectable } from 'kysely';
import type { AlertsTable, OutboxEvent } from '../../store/schema.js';

export type AlertRow = Selectable<AlertsTable>;
export type ResolvedBy = NonNullable<AlertsTable['resolved_by']>;

/** What a new alert carries before it gets its id and owner. */
export type NewAlertFields = Pick<AlertRow,
  'alert_type' | 'subject' | 'kind' | 'severity' | 'title' | 'message' | 'evidence' | 'recommendation' | 'occurrences' | 'first_seen_at' | 'last_seen_at'>;

/** The server as notifications show it: taken when the event happens, not when it is sent. */
export interface ServerRef {
  id: string;
  account_id: string;
  name: string;
  hostname: string | null;
  /** JSON text of the tag list, as stored. */
  tags: string;
}

/** The alert record of the API (contract, Alerts: Record). */
export function alertView(row: AlertRow) {
  return {
    id: row.id,
    server_id: row.server_id,
    alert_type: row.alert_type,
    severity: row.severity,
    status: row.status,
    kind: row.kind,
    subject: row.subject,
    title: row.title,
    message: row.message,
    evidence: JSON.parse(row.evidence) as Record<string, unknown>,
    recommendation: row.recommendation,
    occurrences: row.occurrences,
    first_seen_at: row.first_seen_at,
    last_seen_at: row.last_seen_at,
    resolved_at: row.resolved_at,
    resolved_by: row.resolved_by,
    acknowledged: row.acknowledged === 1,
    acknowledged_at: row.acknowledged_at,
  };
}

export type AlertView = ReturnType<typeof alertView>;

/** A new alert row: the store's form of a raised alert. */
export function newAlertRow(id: string, server: Pick<ServerRef, 'id' | 'account_id'>, fields: NewAlertFields): AlertRow {
  return {
    ...fields,
    id,
    account_id: server.account_id,
    server_id: server.id,
    subject_key: fields.subject ?? '',
    status: 'active',
    resolved_at: null,
    resolved_by: null,
    acknowledged: 0,
    acknowledged_at: null,
  };
}

export interface OutboxRow {
  account_id: string;
  server_id: string;
  alert_id: string;
  event: OutboxEvent;
  payload: string;
  created_at: string;
}

/** One notification to send: the event with the alert and the server as they are now. */
export function outboxRow(event: OutboxEvent, alert: AlertRow, server: ServerRef, now: string): OutboxRow {
  const payload = {
    alert: alertView(alert),
    server: { id: server.id, name: server.name, hostname: server.hostname, tags: JSON.parse(server.tags) as string[] },
  };
  return { account_id: server.account_id, server_id: server.id, alert_id: alert.id, event, payload: JSON.stringify(payload), created_at: now };
}
