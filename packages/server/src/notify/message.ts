import { clip } from './text.js';

/**
 * What a notification says, independent of where it goes. An outbox row
 * (or the test endpoint) becomes a Notification; each sender renders the
 * same facts in its service's format.
 */

export type NotificationEvent = 'alert.raised' | 'alert.occurred' | 'alert.resolved' | 'channel.test';
export type Severity = 'critical' | 'warning' | 'info';

/** The alert record of the API (contract, Alerts: Record), as the outbox payload carries it. */
export interface AlertRecord {
  id: string;
  server_id: string;
  alert_type: string;
  severity: Severity;
  status: 'active' | 'resolved';
  kind: 'state' | 'event';
  subject: string | null;
  title: string;
  message: string;
  evidence: Record<string, unknown>;
  recommendation: string;
  occurrences: number;
  first_seen_at: string;
  last_seen_at: string;
  resolved_at: string | null;
  resolved_by: 'condition' | 'manual' | 'mute' | 'ttl' | null;
  acknowledged: boolean;
  acknowledged_at: string | null;
}

export interface ServerSummary {
  id: string;
  name: string;
  hostname: string | null;
  tags: string[];
}

export interface Notification {
  event: NotificationEvent;
  alert: AlertRecord;
  server: ServerSummary;
  /** When the event happened (ISO 8601): the outbox row's time, not the time of sending. */
  at: string;
}

/** The colour family a rendering uses: resolutions are good news whatever the severity was. */
export type Tone = Severity | 'resolved';

/** Colours (RGB as an integer) by tone: critical red, warning amber, info blue, resolved green. */
export const TONE_COLORS: Record<Tone, number> = {
  critical: 0xd92d20,
  warning: 0xf79009,
  info: 0x2e90fa,
  resolved: 0x12b76a,
};

export function toneOf(notification: Notification): Tone {
  return notification.event === 'alert.resolved' ? 'resolved' : notification.alert.severity;
}

const EVENT_LABELS: Record<NotificationEvent, string> = {
  'alert.raised': 'New alert',
  'alert.occurred': 'Occurred again',
  'alert.resolved': 'Resolved',
  'channel.test': 'Test notification',
};

/** The facts every rendering shows, in one order, already reduced to text. */
export interface MessageParts {
  /** `[CRITICAL] New alert: <title> on <server>` */
  headline: string;
  label: string;
  title: string;
  body: string;
  recommendation: string;
  /** Label and value pairs (server, type, subject, times…); empty values are left out. */
  facts: Array<[string, string]>;
  /** Pretty JSON of the evidence, or '' when there is none. */
  evidence: string;
  /** The server's page in the dashboard when PUBLIC_URL is set. */
  link: string | null;
}

const HEADLINE_TITLE_MAX = 200;
const FACT_MAX = 300;

export function serverLabel(server: ServerSummary): string {
  return server.hostname && server.hostname !== server.name ? `${server.name} (${server.hostname})` : server.name;
}

export function messageParts(notification: Notification, publicUrl: string | null): MessageParts {
  const { alert, server, event } = notification;
  const label = EVENT_LABELS[event];
  const level = event === 'alert.resolved' ? 'RESOLVED' : alert.severity.toUpperCase();
  const facts: Array<[string, string]> = [
    ['Server', serverLabel(server)],
    ['Alert type', alert.alert_type],
    ['Severity', alert.severity],
    ['Subject', alert.subject ?? ''],
    ['Occurrences', alert.kind === 'event' ? String(alert.occurrences) : ''],
    ['First seen', alert.first_seen_at],
    ['Last seen', alert.last_seen_at],
    ['Resolved', alert.resolved_at ? `${alert.resolved_at}${alert.resolved_by ? ` (${alert.resolved_by})` : ''}` : ''],
    ['Tags', server.tags.join(', ')],
  ];
  const evidence = Object.keys(alert.evidence).length > 0 ? JSON.stringify(alert.evidence, null, 2) : '';
  // Headline and facts are capped here so that, in every format, an agent's huge title cannot crowd out the rest.
  return {
    headline: `[${level}] ${label}: ${clip(alert.title, HEADLINE_TITLE_MAX)} on ${server.name}`,
    label,
    title: alert.title,
    body: alert.message,
    recommendation: alert.recommendation,
    facts: facts.filter(([, value]) => value !== '').map(([name, value]) => [name, clip(value, FACT_MAX)]),
    evidence,
    link: publicUrl && event !== 'channel.test' ? `${publicUrl}/servers/${encodeURIComponent(server.id)}` : null,
  };
}

/**
 * The message of `POST /channels/:id/test`: a sample alert in the real
 * shape, so a receiver can try its parsing on it, marked as a test by its
 * event type, its `channel_test` alert type and an example server.
 */
export function testNotification(channel: { id: string; name: string }, now: string): Notification {
  return {
    event: 'channel.test',
    at: now,
    alert: {
      id: `alt_test_${channel.id.replace(/^chn_/, '')}`,
      server_id: 'srv_example',
      alert_type: 'channel_test',
      severity: 'info',
      status: 'active',
      kind: 'event',
      subject: null,
      title: 'Kiln test notification',
      message: `This is a test of the channel "${channel.name}". If you can read it, Kiln can notify you here.`,
      evidence: { channel_id: channel.id },
      recommendation: 'Nothing to do: no server has a problem.',
      occurrences: 1,
      first_seen_at: now,
      last_seen_at: now,
      resolved_at: null,
      resolved_by: null,
      acknowledged: false,
      acknowledged_at: null,
    },
    server: { id: 'srv_example', name: 'example-server', hostname: 'example-server.invalid', tags: ['example'] },
  };
}
