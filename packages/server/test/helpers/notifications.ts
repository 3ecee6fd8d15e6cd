import type { Notification, NotificationEvent } from '../../src/notify/message.js';
import { createSenders } from '../../src/notify/senders/index.js';
import { testConfig } from './app.js';

/** Text an agent or a user could send: markup, mentions, entities, a long run, an emoji at the edges. */
export const HOSTILE = '<b>bold?</b> @everyone <!channel> & &amp; </pre> "quoted" 😀';

/** A notification whose every user- and agent-supplied field is hostile; `long` makes the texts exceed every limit. */
export function hostileNotification(event: NotificationEvent = 'alert.raised', options: { long?: boolean; severity?: 'critical' | 'warning' | 'info' } = {}): Notification {
  const long = (text: string) => (options.long ? `${text} ${'😀x&<'.repeat(3000)}` : text);
  return {
    event,
    at: '2026-11-22T12:00:00.000Z',
    alert: {
      id: 'alt_abcdefghijklmnopqrst',
      server_id: 'srv_abcdefghijklmnopqrst',
      alert_type: 'disk_space_high',
      severity: options.severity ?? 'critical',
      status: event === 'alert.resolved' ? 'resolved' : 'active',
      kind: 'state',
      subject: `/var ${HOSTILE}`,
      title: long(`Disk /var is 97% full ${HOSTILE}`),
      message: long(`Only 1.2 GB left ${HOSTILE}`),
      evidence: { mount: '/var', percent_used: 97, note: long(HOSTILE) },
      recommendation: long(`Free space ${HOSTILE}`),
      occurrences: 1,
      first_seen_at: '2026-11-22T11:00:00.000Z',
      last_seen_at: '2026-11-22T12:00:00.000Z',
      resolved_at: event === 'alert.resolved' ? '2026-11-22T12:00:00.000Z' : null,
      resolved_by: event === 'alert.resolved' ? 'condition' : null,
      acknowledged: false,
      acknowledged_at: null,
    },
    server: { id: 'srv_abcdefghijklmnopqrst', name: `web-1 ${HOSTILE}`, hostname: 'web-1.example.com', tags: ['prod', HOSTILE] },
  };
}

/** Senders whose third-party base URLs point at a local receiver. */
export function sendersAt(origin: string, overrides: { smtpUrl?: string | null; publicUrl?: string | null } = {}) {
  const base = testConfig();
  return createSenders({
    ...base,
    smtpUrl: overrides.smtpUrl ?? null,
    publicUrl: overrides.publicUrl ?? null,
    delivery: { ...base.delivery, telegramApiUrl: `${origin}/telegram`, pagerdutyEventsUrl: `${origin}/pagerduty/v2/enqueue`, timeoutMs: 2000 },
  });
}
