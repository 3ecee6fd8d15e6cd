import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { emailRendering } from '../../src/notify/senders/email.js';
import { HOSTILE, hostileNotification, sendersAt } from '../helpers/notifications.js';
import { closedOrigin } from '../helpers/receiver.js';
import { mimePart as part, startSmtpServer } from '../helpers/smtp.js';

type Smtp = Awaited<ReturnType<typeof startSmtpServer>>;
let smtp: Smtp;
before(async () => {
  smtp = await startSmtpServer({
    judgeRecipient: (address) => (address.startsWith('full@') ? { code: 451, message: 'try again later' }
      : address.startsWith('nobody@') ? { code: 550, message: 'no such user' } : null),
  });
});
after(() => smtp.close());

const ctx = () => ({ deliveryId: 'dlv_mail0000000000000000', now: new Date('2026-11-22T12:00:01.000Z') });
const email = (recipients: string[]) => ({ type: 'email' as const, config: { recipients } });

describe('e-mail sender', () => {
  test('renders every value escaped in the HTML part and verbatim in the text part', () => {
    const { subject, text, html } = emailRendering(hostileNotification(), 'https://kiln.example.com');
    assert.ok(subject.startsWith('[CRITICAL] New alert: Disk /var is 97% full <b>bold?</b>'));
    assert.ok(text.includes(`Server: web-1 ${HOSTILE} (web-1.example.com)`));
    assert.ok(!html.includes('<b>bold?</b>') && !html.includes('</pre> "quoted"'));
    assert.ok(html.includes('web-1 &lt;b&gt;bold?&lt;/b&gt; @everyone &lt;!channel&gt; &amp; &amp;amp; &lt;/pre&gt; &quot;quoted&quot;'));
    assert.ok(html.includes('<a href="https://kiln.example.com/servers/srv_abcdefghijklmnopqrst">'));
  });

  test('sends a plain-text and an HTML part through SMTP_URL to every recipient', async () => {
    const result = await sendersAt('http://127.0.0.1:9', { smtpUrl: smtp.url }).send(email(['ops@example.com', 'dev@example.com']), hostileNotification(), ctx());
    assert.deepEqual([result.ok, result.retryable, result.error], [true, false, null]);
    assert.match(result.smtpReply!, /^250 /);
    const mail = await smtp.next();
    assert.deepEqual(mail.to, ['ops@example.com', 'dev@example.com']);
    assert.equal(mail.from, 'kiln@test.invalid');
    assert.match(mail.raw, /X-Kiln-Delivery: dlv_mail0000000000000000/);
    assert.match(mail.raw, /multipart\/alternative/);
    assert.ok(part(mail.raw, 'text/plain').includes(`Only 1.2 GB left ${HOSTILE}`));
    const html = part(mail.raw, 'text/html');
    assert.ok(html.includes('Only 1.2 GB left &lt;b&gt;bold?&lt;/b&gt;'));
    assert.ok(!html.includes('<b>bold?</b>'));
  });

  test('an SMTP 5xx refusal is final, a 4xx is retryable, both carry the reply', async () => {
    const senders = sendersAt('http://127.0.0.1:9', { smtpUrl: smtp.url });
    const permanent = await senders.send(email(['nobody@example.com']), hostileNotification(), ctx());
    assert.deepEqual([permanent.ok, permanent.retryable], [false, false]);
    assert.match(permanent.smtpReply!, /^550 .*no such user/);
    assert.match(permanent.error!, /^SMTP 550 /);
    const temporary = await senders.send(email(['full@example.com']), hostileNotification(), ctx());
    assert.deepEqual([temporary.ok, temporary.retryable], [false, true]);
    assert.match(temporary.smtpReply!, /^451 .*try again later/);
  });

  test('a refused recipient among accepted ones is a success that names it', async () => {
    const result = await sendersAt('http://127.0.0.1:9', { smtpUrl: smtp.url }).send(email(['ops@example.com', 'nobody@example.com']), hostileNotification(), ctx());
    assert.equal(result.ok, true);
    assert.equal(result.error, 'refused recipients: nobody@example.com');
    assert.deepEqual((await smtp.next()).to, ['ops@example.com']);
  });

  test('no SMTP server listening is retryable; no SMTP_URL at all is final', async () => {
    const down = `smtp://${new URL(await closedOrigin()).host}`;
    const refused = await sendersAt('http://127.0.0.1:9', { smtpUrl: down }).send(email(['ops@example.com']), hostileNotification(), ctx());
    assert.deepEqual([refused.ok, refused.retryable, refused.smtpReply], [false, true, null]);
    assert.match(refused.error!, /^SMTP connection failed \(ESOCKET|ECONNECTION/);
    const unset = await sendersAt('http://127.0.0.1:9').send(email(['ops@example.com']), hostileNotification(), ctx());
    assert.deepEqual([unset.ok, unset.retryable], [false, false]);
    assert.match(unset.error!, /SMTP_URL is unset/);
  });
});
