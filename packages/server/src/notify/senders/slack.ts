import type { OutboundClient } from '../../lib/safe-fetch.js';
import type { SlackConfig } from '../channel-types.js';
import { messageParts, type Notification } from '../message.js';
import { escapeMarkup, fitMarkup } from '../text.js';
import { postJson, type Sender } from './sender.js';

/** Block Kit limits: a section's text, a section field, fields per section, blocks per message. */
export const SLACK_LIMITS = { sectionText: 3000, fieldText: 2000, fields: 10, blocks: 50, fallbackText: 3000 } as const;

/** Escaped mrkdwn of at most `max` characters; a cut never leaves half an entity such as `&am`. */
function mrkdwn(text: string, max: number): string {
  return fitMarkup([{ text }], escapeMarkup, max);
}

const section = (text: string) => ({ type: 'section', text: { type: 'mrkdwn', text } });

/** An incoming-webhook payload: `text` for notifications and old clients, `blocks` for the message itself. */
export function slackPayload(notification: Notification, publicUrl: string | null) {
  const parts = messageParts(notification, publicUrl);
  const L = SLACK_LIMITS;
  const blocks: unknown[] = [
    section(mrkdwn(`*${parts.headline}*\n${parts.body}`, L.sectionText)),
    {
      type: 'section',
      fields: parts.facts.slice(0, L.fields).map(([label, value]) => ({ type: 'mrkdwn', text: mrkdwn(`*${label}*\n${value}`, L.fieldText) })),
    },
  ];
  if (parts.recommendation) blocks.push(section(mrkdwn(`_${parts.recommendation}_`, L.sectionText)));
  // The fence is added after clipping, so a long evidence block still closes.
  if (parts.evidence) blocks.push(section(`\`\`\`${mrkdwn(parts.evidence, L.sectionText - 6)}\`\`\``));
  const context = [`Kiln · ${notification.event} · ${notification.alert.id}`];
  if (parts.link) context.push(`<${parts.link}|Open in Kiln>`);
  blocks.push({ type: 'context', elements: context.map((text) => ({ type: 'mrkdwn', text })) });
  return { text: mrkdwn(parts.headline, L.fallbackText), blocks: blocks.slice(0, L.blocks) };
}

export function slackSender(outbound: OutboundClient, publicUrl: string | null): Sender<SlackConfig> {
  return async (config, notification) => postJson(outbound, { url: config.webhook_url, body: slackPayload(notification, publicUrl) });
}
