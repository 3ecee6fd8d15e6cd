/** The six channel types and the shape of each one's config, as stored (decrypted) and as senders use it. */

export const CHANNEL_TYPES = ['email', 'telegram', 'slack', 'discord', 'pagerduty', 'webhook'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

export interface EmailConfig {
  recipients: string[];
}

export interface TelegramConfig {
  bot_token: string;
  /** A chat id (integer, as text) or `@channelname`. */
  chat_id: string;
}

export interface SlackConfig {
  webhook_url: string;
}

export interface DiscordConfig {
  webhook_url: string;
}

export interface PagerDutyConfig {
  routing_key: string;
}

export interface WebhookConfig {
  url: string;
  /** Signs deliveries (Standard Webhooks) when set. */
  secret: string | null;
}

export interface ConfigByType {
  email: EmailConfig;
  telegram: TelegramConfig;
  slack: SlackConfig;
  discord: DiscordConfig;
  pagerduty: PagerDutyConfig;
  webhook: WebhookConfig;
}

/** A channel's type together with its config, so the two cannot disagree. */
export type ChannelTarget = { [K in ChannelType]: { type: K; config: ConfigByType[K] } }[ChannelType];

export function isChannelType(value: string): value is ChannelType {
  return (CHANNEL_TYPES as readonly string[]).includes(value);
}
