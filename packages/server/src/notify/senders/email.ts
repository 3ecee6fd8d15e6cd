import { performance } from 'node:perf_hooks';
import nodemailer from 'nodemailer';
import type { EmailConfig } from '../channel-types.js';
import { TONE_COLORS, messageParts, toneOf, type Notification } from '../message.js';
import { escapeHtml, excerpt } from '../text.js';
import { elapsed, type Sender, type SendResult } from './sender.js';

export interface EmailRendering {
  subject: string;
  text: string;
  html: string;
}

/** The plain-text and HTML parts. Every value is escaped in the HTML: names, tags and evidence come from users and agents. */
export function emailRendering(notification: Notification, publicUrl: string | null): EmailRendering {
  const parts = messageParts(notification, publicUrl);
  const text = [
    parts.headline,
    '',
    ...parts.facts.map(([label, value]) => `${label}: ${value}`),
    '',
    parts.body,
    ...(parts.recommendation ? ['', parts.recommendation] : []),
    ...(parts.evidence ? ['', 'Evidence:', parts.evidence] : []),
    ...(parts.link ? ['', parts.link] : []),
    '',
    `-- Kiln (${notification.event}, alert ${notification.alert.id})`,
  ].join('\n');
  const colour = `#${TONE_COLORS[toneOf(notification)].toString(16).padStart(6, '0')}`;
  const rows = parts.facts
    .map(([label, value]) => `<tr><th align="left" style="padding:2px 12px 2px 0">${escapeHtml(label)}</th><td>${escapeHtml(value)}</td></tr>`)
    .join('');
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif">',
    `<h2 style="border-left:6px solid ${colour};padding-left:8px">${escapeHtml(parts.headline)}</h2>`,
    `<table>${rows}</table>`,
    `<p>${escapeHtml(parts.body)}</p>`,
    parts.recommendation ? `<p><em>${escapeHtml(parts.recommendation)}</em></p>` : '',
    parts.evidence ? `<pre style="background:#f4f4f4;padding:8px">${escapeHtml(parts.evidence)}</pre>` : '',
    parts.link ? `<p><a href="${escapeHtml(parts.link)}">Open in Kiln</a></p>` : '',
    `<p style="color:#888">Kiln · ${escapeHtml(notification.event)} · ${escapeHtml(notification.alert.id)}</p>`,
    '</body></html>',
  ].join('');
  return { subject: parts.headline, text, html };
}

interface SmtpError extends Error {
  code?: string;
  responseCode?: number;
  response?: string;
}

/** SMTP 4xx is a temporary refusal (retry), 5xx a permanent one; no reply at all is a connection problem (retry). */
function smtpFailure(err: SmtpError, from: number): SendResult {
  const reply = err.response ? excerpt(err.response) : null;
  const code = err.responseCode ?? null;
  const error = reply ? `SMTP ${code ?? ''} ${reply}`.replace(/\s+/g, ' ') : `SMTP connection failed (${err.code ?? 'error'}: ${excerpt(err.message)})`;
  return {
    ok: false,
    retryable: code === null || code < 500,
    httpStatus: null,
    smtpReply: reply,
    error,
    retryAfterSeconds: null,
    durationMs: elapsed(from),
  };
}

/**
 * Sends through SMTP_URL with a transport of its own (channel mail must
 * report the server's reply, which the account mailer does not). Without
 * SMTP_URL every e-mail delivery fails finally with a reason that says so.
 */
export function emailSender(options: { smtpUrl: string | null; from: string; timeoutMs: number; publicUrl: string | null }): Sender<EmailConfig> {
  const transport = options.smtpUrl
    ? nodemailer.createTransport({
      url: options.smtpUrl,
      connectionTimeout: options.timeoutMs,
      greetingTimeout: options.timeoutMs,
      socketTimeout: options.timeoutMs,
    } as nodemailer.TransportOptions)
    : null;
  return async (config, notification, ctx) => {
    const from = performance.now();
    if (!transport) {
      return {
        ok: false, retryable: false, httpStatus: null, smtpReply: null, retryAfterSeconds: null, durationMs: elapsed(from),
        error: 'e-mail is not configured on this Kiln server (SMTP_URL is unset)',
      };
    }
    const rendering = emailRendering(notification, options.publicUrl);
    try {
      const info = await transport.sendMail({
        from: options.from,
        to: config.recipients,
        subject: rendering.subject,
        text: rendering.text,
        html: rendering.html,
        headers: { 'X-Kiln-Delivery': ctx.deliveryId },
      });
      const rejected = (info.rejected ?? []).map(String);
      return {
        ok: true, retryable: false, httpStatus: null, retryAfterSeconds: null, durationMs: elapsed(from),
        smtpReply: excerpt(String(info.response ?? '')),
        error: rejected.length > 0 ? `refused recipients: ${excerpt(rejected.join(', '))}` : null,
      };
    } catch (err) {
      return smtpFailure(err as SmtpError, from);
    }
  };
}
