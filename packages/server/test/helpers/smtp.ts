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
