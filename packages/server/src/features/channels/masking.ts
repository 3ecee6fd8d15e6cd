import type { ChannelTarget } from '../../notify/channel-types.js';

/**
 * Masking (contract): a secret keeps its first and last 4 characters with
 * `****` between; a webhook URL keeps scheme and host and hides its path
 * (the path is the credential of Slack and Discord webhooks); a webhook
 * signing secret is always `****`.
 */

export const MASK = '****';
/** Below this length, 4 + 4 visible characters would give away too much of the secret: it is `****` whole. */
export const MASK_MIN_CHARS = 16;

export function maskSecret(value: string): string {
  return value.length < MASK_MIN_CHARS ? MASK : `${value.slice(0, 4)}${MASK}${value.slice(-4)}`;
}

export function maskUrl(value: string): string {
  try {
    const url = new URL(value);
    return `${url.protocol}//${url.host}/${MASK}`;
  } catch {
    return MASK;
  }
}

/** The config as every response shows it. */
export function maskedConfig(target: ChannelTarget): Record<string, unknown> {
  switch (target.type) {
    case 'email': return { recipients: target.config.recipients };
    case 'telegram': return { bot_token: maskSecret(target.config.bot_token), chat_id: target.config.chat_id };
    case 'slack':
    case 'discord': return { webhook_url: maskUrl(target.config.webhook_url) };
    case 'pagerduty': return { routing_key: maskSecret(target.config.routing_key) };
    case 'webhook': return { url: maskUrl(target.config.url), secret: target.config.secret ? MASK : null };
  }
}
