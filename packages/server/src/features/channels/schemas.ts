import { Type, type TSchema } from '@sinclair/typebox';
import { NullableTimestamp, Timestamp } from '../../http/schemas.js';
import { CHANNEL_TYPES } from '../../notify/channel-types.js';
import { RECIPIENTS_MAX } from './config-rules.js';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const OneOf = <T extends string>(values: readonly T[], description?: string) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...(description && { description }) });

export const DELIVERY_STATUSES = ['sent', 'retrying', 'failed'] as const;
export const DEFAULT_DELIVERIES_PAGE = 50;

const CONFIG_DESCRIPTION = [
  'By channel_type:',
  `email {recipients: 1-${RECIPIENTS_MAX} e-mail addresses};`,
  'telegram {bot_token, chat_id (integer or @channelname)};',
  'slack {webhook_url (https)}; discord {webhook_url (https)};',
  'pagerduty {routing_key (32 characters)};',
  'webhook {url (http or https), secret (optional: whsec_<base64> or 8-256 characters; signs deliveries per Standard Webhooks)}.',
  'Secrets are masked in responses; on PUT a masked value sent back unchanged keeps the stored one.',
].join(' ');

// The per-type rules live in config-rules.ts, so each problem gets its exact JSON pointer; the schema only bounds the size.
const ConfigInput = Type.Unsafe<Record<string, unknown>>({ type: 'object', maxProperties: 20, description: CONFIG_DESCRIPTION });
const NameInput = Type.String({ maxLength: 1000, description: '1-100 characters after trimming; no control characters' });

export const CreateChannelBody = Type.Object({
  name: NameInput,
  channel_type: Type.String({ maxLength: 100, description: `One of: ${CHANNEL_TYPES.join(', ')}` }),
  config: ConfigInput,
  enabled: Type.Optional(Type.Boolean({ default: true })),
}, { additionalProperties: false });

export const UpdateChannelBody = Type.Object({
  name: Type.Optional(NameInput),
  config: Type.Optional(ConfigInput),
  enabled: Type.Optional(Type.Boolean()),
  // Declared so it is not silently dropped: a channel keeps its type.
  channel_type: Type.Optional(Type.Unknown({ description: 'Not updatable: any value is 400 validation_failed' })),
}, { additionalProperties: false, description: 'Fields left out keep their value; config replaces the whole config' });

export const Channel = Type.Object({
  id: Type.String(),
  name: Type.String(),
  channel_type: OneOf(CHANNEL_TYPES),
  config: Nullable(Type.Object({}, {
    additionalProperties: true,
    description: 'Masked; null when the stored config cannot be decrypted with the current SECRET_KEY (PUT a new config)',
  })),
  enabled: Type.Boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
  last_delivery_at: NullableTimestamp,
  last_delivery_status: Nullable(OneOf(DELIVERY_STATUSES)),
});

export const ListChannelsResponse = Type.Object({ channels: Type.Array(Channel) });

export const TestChannelResponse = Type.Object({
  success: Type.Boolean(),
  error: Type.Optional(Type.String({ description: 'The upstream reason: HTTP status and body excerpt, SMTP reply, DNS or connection error, timeout' })),
});

export const Delivery = Type.Object({
  id: Type.String({ description: 'The delivery: one notification to this channel; every attempt of it shares the id (the webhook-id header)' }),
  attempt: Type.Integer({ minimum: 1 }),
  event: OneOf(['alert.raised', 'alert.occurred', 'alert.resolved', 'channel.test'] as const),
  alert_id: Nullable(Type.String()),
  status: OneOf(DELIVERY_STATUSES, 'sent; retrying (failed, another attempt follows); failed (final)'),
  http_status: Nullable(Type.Integer()),
  smtp_reply: Nullable(Type.String()),
  error: Nullable(Type.String()),
  duration_ms: Type.Integer(),
  created_at: Timestamp,
  next_attempt_at: NullableTimestamp,
});

export const ListDeliveriesQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: DEFAULT_DELIVERIES_PAGE })),
  cursor: Type.Optional(Type.String({ maxLength: 1000, description: 'next_cursor of the previous page' })),
}, { additionalProperties: false });

export const ListDeliveriesResponse = Type.Object({
  deliveries: Type.Array(Delivery, { description: 'Attempts, newest first' }),
  next_cursor: Nullable(Type.String()),
});
