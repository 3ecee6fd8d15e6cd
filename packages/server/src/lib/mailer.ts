import nodemailer from 'nodemailer';
import type { Logger } from 'pino';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
  /** Waits for messages being sent, then releases the transport. */
  close(): Promise<void>;
}

/** Tracks sends in progress so shutdown can wait for them. */
function tracked(send: (message: MailMessage) => Promise<void>, release: () => void): Mailer {
  const pending = new Set<Promise<void>>();
  return {
    send(message) {
      const sending = send(message).finally(() => pending.delete(sending));
      pending.add(sending);
      return sending;
    },
    async close() {
      await Promise.allSettled([...pending]);
      release();
    },
  };
}

/** Sends through SMTP_URL with nodemailer. */
export function smtpMailer(smtpUrl: string, from: string): Mailer {
  const transport = nodemailer.createTransport(smtpUrl);
  return tracked(
    async (message) => {
      await transport.sendMail({ from, ...message });
    },
    () => transport.close(),
  );
}

/** Without SMTP_URL, e-mails go to the log so a single-box install still shows verification links. */
export function logMailer(log: Logger): Mailer {
  return tracked(
    async (message) => {
      log.info({ mail: { to: message.to, subject: message.subject, text: message.text } }, 'e-mail (SMTP_URL unset, not sent)');
    },
    () => {},
  );
}
