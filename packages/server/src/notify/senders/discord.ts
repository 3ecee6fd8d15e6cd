import type { OutboundClient } from '../../lib/safe-fetch.js';
import type { DiscordConfig } from '../channel-types.js';
import { TONE_COLORS, messageParts, toneOf, type Notification } from '../message.js';
import { clip } from '../text.js';
import { postJson, type Sender } from './sender.js';

/** Discord's documented limits for webhook messages and embeds. */
export const DISCORD_LIMITS = {
  content: 2000, title: 256, description: 4096, fields: 25, fieldName: 256, fieldValue: 1024, footer: 2048, total: 6000,
} as const;

interface Field {
  name: string;
  value: string;
  inline: boolean;
}

/** The characters Discord counts toward an embed's 6000. */
function embedSize(embed: { title: string; description: string; fields: Field[]; footer: { text: string } }): number {
  return embed.title.length + embed.description.length + embed.footer.text.length
    + embed.fields.reduce((sum, f) => sum + f.name.length + f.value.length, 0);
}

/**
 * `content` carries the headline (what a phone notification shows), one
 * embed the details. `allowed_mentions: {parse: []}` keeps an `@everyone`
 * in a server name or agent-reported text from pinging anyone.
 */
export function discordPayload(notification: Notification, publicUrl: string | null) {
  const parts = messageParts(notification, publicUrl);
  const L = DISCORD_LIMITS;
  const fields: Field[] = parts.facts.slice(0, L.fields - 1).map(([name, value]) => ({
    name: clip(name, L.fieldName), value: clip(value, L.fieldValue), inline: value.length <= 40,
  }));
  // The fence is added after clipping, so long evidence still renders as one code block.
  if (parts.evidence) fields.push({ name: 'Evidence', value: `\`\`\`json\n${clip(parts.evidence, L.fieldValue - 12)}\n\`\`\``, inline: false });
  const description = [parts.body, parts.recommendation && `*${parts.recommendation}*`].filter(Boolean).join('\n\n');
  const embed = {
    title: clip(`${parts.label}: ${parts.title}`, L.title),
    description: clip(description, L.description),
    color: TONE_COLORS[toneOf(notification)],
    fields,
    footer: { text: `Kiln · ${notification.alert.alert_type}` },
    timestamp: notification.at,
    ...(parts.link && { url: parts.link }),
  };
  // Over the total, evidence goes first, then the description is shortened.
  const over = () => embedSize(embed) - L.total;
  if (over() > 0 && parts.evidence) embed.fields = embed.fields.filter((f) => f.name !== 'Evidence');
  if (over() > 0) embed.description = clip(embed.description, Math.max(0, embed.description.length - over()));
  return { content: clip(parts.headline, L.content), embeds: [embed], allowed_mentions: { parse: [] } };
}

export function discordSender(outbound: OutboundClient, publicUrl: string | null): Sender<DiscordConfig> {
  return async (config, notification) => postJson(outbound, { url: config.webhook_url, body: discordPayload(notification, publicUrl) });
}
