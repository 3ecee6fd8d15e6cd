import { createHmac } from 'node:crypto';
import type { OutboundClient } from '../../lib/safe-fetch.js';
import type { WebhookConfig } from '../channel-types.js';
import type { Notification } from '../message.js';
import { postJson, type Sender } from './sender.js';

const WHSEC_PREFIX = 'whsec_';

/** The HMAC key of a secret: a `whsec_<base64>` secret is its decoded bytes, any other secret its UTF-8 bytes (contract). */
export function signingKey(secret: string): Buffer {
  return secret.startsWith(WHSEC_PREFIX) ? Buffer.from(secret.slice(WHSEC_PREFIX.length), 'base64') : Buffer.from(secret, 'utf8');
}

/** Standard Webhooks: `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`. */
export function webhookSignature(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', signingKey(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The body of a webhook delivery (contract): the event, when it happened, the alert and its server. */
export function webhookBody(notification: Notification): string {
  const { server } = notification;
  return JSON.stringify({
    type: notification.event,
    timestamp: notification.at,
    data: { alert: notification.alert, server: { id: server.id, name: server.name, hostname: server.hostname, tags: server.tags } },
  });
}

/**
 * POSTs the event to the user's URL. `webhook-id` is the delivery id, so a
 * receiver can drop a retry it already handled; `webhook-timestamp` is the
 * time of this attempt, so the signature of a replayed request ages out.
 */
export function webhookSender(outbound: OutboundClient): Sender<WebhookConfig> {
  return async (config, notification, ctx) => {
    const body = webhookBody(notification);
    const timestamp = Math.floor(ctx.now.getTime() / 1000);
    const headers: Record<string, string> = { 'webhook-id': ctx.deliveryId, 'webhook-timestamp': String(timestamp) };
    if (config.secret) headers['webhook-signature'] = webhookSignature(config.secret, ctx.deliveryId, timestamp, body);
    return postJson(outbound, { url: config.url, body, headers });
  };
}
