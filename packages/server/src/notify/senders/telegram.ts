import type { OutboundClient } from '../../lib/safe-fetch.js';
import type { TelegramConfig } from '../channel-types.js';
import { messageParts, type Notification } from '../message.js';
import { clip, escapeMarkup, fitMarkup, type Segment } from '../text.js';
import { postJson, type Sender } from './sender.js';

/** sendMessage takes 1-4096 characters; counting the markup too keeps the parsed text within it. */
export const TELEGRAM_TEXT_MAX = 4096;

/** The message in Telegram's HTML: headline, facts, text, recommendation, evidence, link; cut to fit, tags kept whole. */
export function telegramText(notification: Notification, publicUrl: string | null): string {
  const parts = messageParts(notification, publicUrl);
  const segments: Segment[] = [{ open: '<b>', text: parts.headline, close: '</b>\n' }];
  for (const [label, value] of parts.facts) segments.push({ open: '<b>', text: label, close: ':</b> ' }, { text: `${value}\n` });
  // Body and advice get bounded shares, so the link and some evidence still fit after them.
  segments.push({ text: `\n${clip(parts.body, 2000)}\n` });
  if (parts.recommendation) segments.push({ open: '<i>', text: clip(parts.recommendation, 500), close: '</i>\n' });
  if (parts.link) segments.push({ text: `${parts.link}\n` });
  if (parts.evidence) segments.push({ open: '<pre>', text: parts.evidence, close: '</pre>' });
  return fitMarkup(segments, escapeMarkup, TELEGRAM_TEXT_MAX).trimEnd();
}

/** Bot API sendMessage at `<TELEGRAM_API_URL>/bot<token>/sendMessage`. */
export function telegramSender(outbound: OutboundClient, apiUrl: string, publicUrl: string | null): Sender<TelegramConfig> {
  return async (config, notification) => postJson(outbound, {
    url: `${apiUrl}/bot${config.bot_token}/sendMessage`,
    body: {
      chat_id: config.chat_id,
      text: telegramText(notification, publicUrl),
      parse_mode: 'HTML',
      link_preview_options: { is_disabled: true },
    },
    trusted: true,
  });
}
