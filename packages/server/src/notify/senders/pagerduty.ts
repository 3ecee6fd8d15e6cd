import type { OutboundClient } from '../../lib/safe-fetch.js';
import type { PagerDutyConfig } from '../channel-types.js';
import { messageParts, type Notification } from '../message.js';
import { clip } from '../text.js';
import { postJson, type Sender } from './sender.js';

export const PAGERDUTY_SUMMARY_MAX = 1024;

/**
 * An Events API v2 event. The alert id is the dedup_key, so every
 * occurrence of one alert lands on one PagerDuty alert and the resolution
 * closes it. A test gets a dedup_key of its own and severity info, so it
 * never touches a real incident.
 */
export function pagerDutyEvent(config: PagerDutyConfig, notification: Notification, deliveryId: string, publicUrl: string | null) {
  const { alert, server, event } = notification;
  const dedupKey = event === 'channel.test' ? `kiln-test-${deliveryId}` : alert.id;
  if (event === 'alert.resolved') {
    return { routing_key: config.routing_key, event_action: 'resolve', dedup_key: dedupKey };
  }
  const parts = messageParts(notification, publicUrl);
  return {
    routing_key: config.routing_key,
    event_action: 'trigger',
    dedup_key: dedupKey,
    client: 'Kiln',
    ...(parts.link && { client_url: parts.link }),
    payload: {
      summary: clip(`${alert.title} on ${server.name}`, PAGERDUTY_SUMMARY_MAX),
      source: server.hostname ?? server.name,
      severity: alert.severity,
      timestamp: notification.at,
      ...(alert.subject && { component: alert.subject }),
      class: alert.alert_type,
      custom_details: {
        event,
        message: alert.message,
        recommendation: alert.recommendation,
        evidence: alert.evidence,
        occurrences: alert.occurrences,
        first_seen_at: alert.first_seen_at,
        server: { id: server.id, name: server.name, hostname: server.hostname, tags: server.tags },
      },
    },
  };
}

/** POST to PAGERDUTY_EVENTS_URL (an operator setting, so its address is trusted). */
export function pagerDutySender(outbound: OutboundClient, eventsUrl: string, publicUrl: string | null): Sender<PagerDutyConfig> {
  return async (config, notification, ctx) => postJson(outbound, {
    url: eventsUrl,
    body: pagerDutyEvent(config, notification, ctx.deliveryId, publicUrl),
    trusted: true,
  });
}
