/**
 * Text helpers for notification bodies. Lengths are UTF-16 code units, the
 * unit the chat services count in, and cuts fall between code points, so an
 * emoji is never split into a broken half.
 */

export const ELLIPSIS = '…';

/** `text` shortened to at most `max` code units, with an ellipsis when anything was cut. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= ELLIPSIS.length) return ELLIPSIS.slice(0, Math.max(0, max));
  let out = '';
  for (const char of text) {
    if (out.length + char.length > max - ELLIPSIS.length) break;
    out += char;
  }
  return out + ELLIPSIS;
}

/** One line for an error message: control characters and runs of whitespace become single spaces. */
export function excerpt(text: string, max = 300): string {
  return clip(text.replace(/[\p{Cc}\s]+/gu, ' ').trim(), max);
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for HTML element content and quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

/**
 * Escapes &, < and >: all that Telegram's HTML mode and Slack's mrkdwn
 * read as markup in text (Slack: links and `<!channel>` mentions). Quotes
 * stay, since neither format puts our text inside attributes.
 */
export function escapeMarkup(text: string): string {
  return text.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
}

/** A piece of markup: `open` and `close` wrap text that is escaped by the renderer. */
export interface Segment {
  open?: string;
  text: string;
  close?: string;
}

/**
 * Joins segments into markup of at most `max` code units. Text is escaped
 * character by character as it is added, so a cut can only fall between
 * whole characters of the source: never inside an entity such as `&amp;`,
 * never inside a tag, and every opened tag is closed.
 */
export function fitMarkup(segments: readonly Segment[], escape: (text: string) => string, max: number): string {
  let out = '';
  for (const segment of segments) {
    const open = segment.open ?? '';
    const close = segment.close ?? '';
    const whole = open + escape(segment.text) + close;
    if (out.length + whole.length <= max) {
      out += whole;
      continue;
    }
    const room = max - out.length - open.length - close.length - ELLIPSIS.length;
    if (room <= 0) break;
    let body = '';
    for (const char of segment.text) {
      const escaped = escape(char);
      if (body.length + escaped.length > room) break;
      body += escaped;
    }
    out += open + body + ELLIPSIS + close;
    break;
  }
  return out;
}
