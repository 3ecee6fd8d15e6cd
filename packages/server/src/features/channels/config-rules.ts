import { validationFailed } from '../../http/errors.js';
import { EMAIL } from '../accounts/service.js';
import {
  CHANNEL_TYPES, isChannelType, type ChannelTarget, type ChannelType, type ConfigByType, type WebhookConfig,
} from '../../notify/channel-types.js';
import { MASK, maskSecret, maskUrl } from './masking.js';

/**
 * The config rules of each channel type. Errors point into the request
 * (`/config/recipients/2`). On update, a secret sent back exactly as GET
 * showed it (masked) keeps the stored value, so a client can edit the name
 * or the recipients of a channel whose secrets it never saw.
 */

export const RECIPIENTS_MAX = 20;
export const URL_MAX_CHARS = 2048;
const BOT_TOKEN = /^\d{5,15}:[A-Za-z0-9_-]{30,60}$/;
const CHAT_ID_NUMBER = /^-?\d{1,20}$/;
const CHAT_USERNAME = /^@[A-Za-z][A-Za-z0-9_]{3,31}$/;
const ROUTING_KEY = /^[A-Za-z0-9]{32}$/;
const WHSEC = /^whsec_([A-Za-z0-9+/]+={0,2})$/;
const SECRET_TEXT = /^[\x21-\x7E]{8,256}$/;

type Input = Record<string, unknown>;

export function checkChannelType(value: string): ChannelType {
  if (!isChannelType(value)) throw validationFailed('/channel_type', `must be one of: ${CHANNEL_TYPES.join(', ')}`, value.slice(0, 100));
  return value;
}

function field(name: string): string {
  return `/config/${name}`;
}

function requiredString(input: Input, name: string): string {
  const value = input[name];
  if (value === undefined || value === null) throw validationFailed(field(name), 'is required');
  if (typeof value !== 'string') throw validationFailed(field(name), 'must be a string');
  return value;
}

/**
 * A secret-bearing field: the stored value when the client sent back its
 * mask, else a new value checked by `check`. A value carrying the mask
 * that is not the current mask is refused rather than stored literally.
 */
function secretField(input: Input, name: string, current: string | undefined, mask: (v: string) => string, check: (v: string) => string): string {
  const value = requiredString(input, name);
  if (current !== undefined && value === mask(current)) return current;
  if (value.includes(MASK)) throw validationFailed(field(name), 'is a masked value that does not match the stored one; send the full value');
  return check(value);
}

/** An absolute http(s) URL without credentials or whitespace, normalised by the URL parser. */
export function checkUrl(value: string, pointer: string, protocols: readonly string[]): string {
  if (value.length > URL_MAX_CHARS) throw validationFailed(pointer, `must be at most ${URL_MAX_CHARS} characters`);
  // The URL parser silently drops tabs and newlines; they are refused instead of guessed at.
  if (/[\p{Cc}\s]/u.test(value)) throw validationFailed(pointer, 'must not contain spaces or control characters');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw validationFailed(pointer, 'must be an absolute URL');
  }
  if (!protocols.includes(url.protocol)) throw validationFailed(pointer, `must be an ${protocols.map((p) => p.slice(0, -1)).join(' or ')} URL`);
  if (url.username || url.password) throw validationFailed(pointer, 'must not carry a user name or password');
  if (!url.hostname) throw validationFailed(pointer, 'must name a host');
  return url.href;
}

function emailConfig(input: Input): ConfigByType['email'] {
  const value = input.recipients;
  if (!Array.isArray(value)) throw validationFailed(field('recipients'), `must be a list of 1-${RECIPIENTS_MAX} e-mail addresses`);
  if (value.length < 1 || value.length > RECIPIENTS_MAX) throw validationFailed(field('recipients'), `must hold 1-${RECIPIENTS_MAX} addresses`);
  const recipients: string[] = [];
  const seen = new Set<string>();
  value.forEach((item, i) => {
    if (typeof item !== 'string' || item.length > 254 || !EMAIL.test(item.trim())) throw validationFailed(field(`recipients/${i}`), 'must be an e-mail address');
    const address = item.trim();
    if (!seen.has(address.toLowerCase())) recipients.push(address);
    seen.add(address.toLowerCase());
  });
  return { recipients };
}

function chatId(input: Input): string {
  const value = input.chat_id;
  const issue = 'must be a chat id (an integer) or a public @channelname';
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value === 0) throw validationFailed(field('chat_id'), issue);
    return String(value);
  }
  if (typeof value !== 'string') throw validationFailed(field('chat_id'), value === undefined ? 'is required' : issue);
  const text = value.trim();
  if ((CHAT_ID_NUMBER.test(text) && Number(text) !== 0) || CHAT_USERNAME.test(text)) return text;
  throw validationFailed(field('chat_id'), issue);
}

function telegramConfig(input: Input, current?: ConfigByType['telegram']): ConfigByType['telegram'] {
  const botToken = secretField(input, 'bot_token', current?.bot_token, maskSecret, (v) => {
    if (!BOT_TOKEN.test(v)) throw validationFailed(field('bot_token'), 'must be a bot token as BotFather gives it: <digits>:<30-60 letters, digits, _ or ->');
    return v;
  });
  return { bot_token: botToken, chat_id: chatId(input) };
}

function webhookUrlConfig(input: Input, current?: { webhook_url: string }): { webhook_url: string } {
  return { webhook_url: secretField(input, 'webhook_url', current?.webhook_url, maskUrl, (v) => checkUrl(v, field('webhook_url'), ['https:'])) };
}

function pagerDutyConfig(input: Input, current?: ConfigByType['pagerduty']): ConfigByType['pagerduty'] {
  return {
    routing_key: secretField(input, 'routing_key', current?.routing_key, maskSecret, (v) => {
      if (!ROUTING_KEY.test(v)) throw validationFailed(field('routing_key'), 'must be the 32-character integration key of an Events API v2 integration');
      return v;
    }),
  };
}

function webhookSecret(input: Input, current: string | null | undefined): string | null {
  const value = input.secret;
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string') throw validationFailed(field('secret'), 'must be a string or null');
  if (value === MASK && current) return current;
  const whsec = WHSEC.exec(value);
  if (whsec) {
    const bytes = Buffer.from(whsec[1]!, 'base64').length;
    if (bytes >= 24 && bytes <= 64) return value;
    throw validationFailed(field('secret'), 'a whsec_ secret must hold 24-64 bytes in base64');
  }
  if (value.includes(MASK)) throw validationFailed(field('secret'), 'is a masked value; send the full secret, or null for none');
  if (!SECRET_TEXT.test(value)) throw validationFailed(field('secret'), 'must be whsec_<base64> or 8-256 printable ASCII characters without spaces');
  return value;
}

function webhookConfig(input: Input, current?: WebhookConfig): WebhookConfig {
  return {
    url: secretField(input, 'url', current?.url, maskUrl, (v) => checkUrl(v, field('url'), ['http:', 'https:'])),
    secret: webhookSecret(input, current?.secret),
  };
}

/**
 * The config of a new channel, or the replacement config of an existing
 * one (`current`, same type). Unknown keys are dropped.
 */
export function checkConfig(type: ChannelType, input: Input, current?: ChannelTarget | null): ChannelTarget {
  const same = <K extends ChannelType>(k: K): ConfigByType[K] | undefined =>
    (current && current.type === k ? current.config : undefined) as ConfigByType[K] | undefined;
  switch (type) {
    case 'email': return { type, config: emailConfig(input) };
    case 'telegram': return { type, config: telegramConfig(input, same('telegram')) };
    case 'slack': return { type, config: webhookUrlConfig(input, same('slack')) };
    case 'discord': return { type, config: webhookUrlConfig(input, same('discord')) };
    case 'pagerduty': return { type, config: pagerDutyConfig(input, same('pagerduty')) };
    case 'webhook': return { type, config: webhookConfig(input, same('webhook')) };
  }
}
