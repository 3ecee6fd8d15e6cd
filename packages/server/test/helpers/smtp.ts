import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
}

/** An SMTP reply to a recipient: `{code: 550, message: '…'}` refuses it. */
export type RecipientVerdict = { code: number; message: string } | null;

/**
 * A real SMTP server on loopback; `next()` yields accepted messages in order.
 * `judgeRecipient` may refuse a recipient with an SMTP reply of its choosing.
 */
export async function startSmtpServer(options: { judgeRecipient?: (address: string) => RecipientVerdict } = {}): Promise<{ url: string; received: ReceivedMail[]; next(): Promise<ReceivedMail>; close(): Promise<void> }> {
  const received: ReceivedMail[] = [];
  const waiters: ((mail: ReceivedMail) => void)[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, callback) {
      const verdict = options.judgeRecipient?.(address.address) ?? null;
      if (!verdict) return callback();
      callback(Object.assign(new Error(verdict.message), { responseCode: verdict.code }));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const mail: ReceivedMail = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        };
        const waiter = waiters.shift();
        if (waiter) waiter(mail);
        else received.push(mail);
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    next: () => new Promise((resolve) => {
      const queued = received.shift();
      if (queued) resolve(queued);
      else waiters.push(resolve);
    }),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The verification token inside a received message (quoted-printable soft breaks undone). */
export function verificationTokenIn(mail: ReceivedMail): string {
  const text = mail.raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
  const match = /verify-email\?token=([A-Za-z0-9_-]+)/.exec(text);
  if (!match) throw new Error(`no verification link in:\n${mail.raw}`);
  return match[1]!;
}

/** The decoded text of one MIME part of a raw message (quoted-printable undone). */
export function mimePart(raw: string, type: 'text/plain' | 'text/html'): string {
  const start = raw.indexOf(`Content-Type: ${type}`);
  if (start < 0) throw new Error(`no ${type} part in:\n${raw}`);
  const body = raw.slice(raw.indexOf('\r\n\r\n', start) + 4);
  const text = body.slice(0, body.search(/\r\n--/));
  const bytes = text.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

/** The header lines of a raw message, unfolded, in order: `[name (lower case), value]`. */
export function mailHeaders(raw: string): Array<[string, string]> {
  const block = raw.slice(0, raw.indexOf('\r\n\r\n')).replace(/\r\n[ \t]+/g, ' ');
  return block.split('\r\n').map((line) => {
    const colon = line.indexOf(':');
    return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()];
  });
}

/** A header value with its RFC 2047 encoded words (B and Q) decoded; adjacent words join without the space between. */
export function decodeHeaderValue(value: string): string {
  const out: string[] = [];
  let bytes: Buffer[] = [];
  const tokens = value.split(/(=\?[^?]+\?[BbQq]\?[^?]*\?=)/);
  tokens.forEach((token, i) => {
    const word = /^=\?[^?]+\?([BbQq])\?([^?]*)\?=$/.exec(token);
    if (word) {
      const [, encoding, text] = word;
      bytes.push(encoding!.toUpperCase() === 'B' ? Buffer.from(text!, 'base64')
        : Buffer.from(text!.replace(/_/g, ' ').replace(/=([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1'));
      return;
    }
    // Whitespace between two encoded words is not part of the text.
    if (token.trim() === '' && bytes.length > 0 && i + 1 < tokens.length) return;
    if (bytes.length) out.push(Buffer.concat(bytes).toString('utf8'));
    bytes = [];
    out.push(token);
  });
  if (bytes.length) out.push(Buffer.concat(bytes).toString('utf8'));
  return out.join('');
}
