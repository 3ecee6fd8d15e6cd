import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { smtpMailer } from '../../src/lib/mailer.js';
import { outboundClient, type OutboundClient } from '../../src/lib/safe-fetch.js';
import { escapeHtml } from '../../src/notify/text.js';
import { createSenders } from '../../src/notify/senders/index.js';
import { deliveryWorkerJob } from '../../src/notify/worker.js';
import { hostSnapshot } from '../helpers/alerts.js';
import { PASSWORD, api, registerUser, startApp, testConfig, uniqueEmail, type TestApp, type TestUser } from '../helpers/app.js';
import { push } from '../helpers/ingest.js';
import { Receiver, type ReceivedRequest } from '../helpers/receiver.js';
import { createServer } from '../helpers/servers.js';
import { decodeHeaderValue, mailHeaders, mimePart, startSmtpServer, type ReceivedMail } from '../helpers/smtp.js';
import { storeKinds } from '../helpers/stores.js';
import { WHSEC } from './sweep.js';

/**
 * A server whose name and tags carry line separators, markup, entities and
 * mentions raises alerts from a snapshot whose mount name carries CR LF and
 * markup; the delivery worker sends them through one channel of every type
 * to real receivers on loopback (HTTP) and a real SMTP server. Nothing of
 * the text may become a header, and every format that reads markup must get
 * it escaped. Then the channel test endpoint does the same with a hostile
 * channel name, and registration with a hostile Host header (the origin of
 * the verification link when PUBLIC_URL is unset).
 */

const INJECT = 'X-Injected';
const NAME = `web-1 \u2028${INJECT}: name <b>bold</b> & &amp; @everyone <!channel> [x](http://e.x)`;
const TAGS = [`ops\u2028Bcc: evil@example.com`, '<script>alert(1)</script>', '&lt;i&gt;'];
const MOUNT = `/var\r\n${INJECT}: mount <img src=x onerror=alert(1)> & \u2029`;
const CHANNEL_NAME = `ops <b>x</b> & \u2028${INJECT}: channel @everyone`;
const BOT_TOKEN = '123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1';
const RECIPIENT = 'ops@example.com';

/** The real outbound client, with Slack and Discord's https:// to loopback sent as http:// (no TLS receiver here). */
function loopbackOutbound(): OutboundClient {
  const real = outboundClient({ allowPrivateTargets: true, timeoutMs: 5000, userAgent: 'Kiln/test (notifications)' });
  return { post: (request) => real.post({ ...request, url: request.url.replace(/^https:\/\/127\.0\.0\.1:/, 'http://127.0.0.1:') }) };
}

const HTTP_HEADERS = new Set(['host', 'connection', 'user-agent', 'content-type', 'content-length', 'webhook-id', 'webhook-timestamp', 'webhook-signature']);
const MAIL_HEADERS = new Set(['content-type', 'from', 'to', 'subject', 'message-id', 'date', 'mime-version', 'x-kiln-delivery']);

function assertCleanHttpHeaders(headers: IncomingHttpHeaders, what: string): void {
  for (const [name, value] of Object.entries(headers)) {
    assert.ok(HTTP_HEADERS.has(name), `${what}: unexpected header ${name}: ${value}`);
    assert.ok(!/injected|bcc|script|everyone|web-1/i.test(String(value)), `${what}: header ${name} carries user text: ${value}`);
  }
}

/** Every & starts an entity; no < or > is left raw outside `allowedTags`. */
function assertEscapedMarkup(text: string, allowedTags: RegExp | null, what: string): void {
  const rest = allowedTags ? text.replace(allowedTags, '') : text;
  assert.ok(!/[<>]/.test(rest), `${what}: raw markup in ${JSON.stringify(rest.slice(0, 400))}`);
  assert.deepEqual(text.match(/&(?!amp;|lt;|gt;|quot;|#39;)/g), null, `${what}: a bare &`);
}

const unescapeMarkup = (text: string) => text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');

for (const kind of storeKinds()) {
  describe(`hostile names and tags in notifications [${kind}]`, () => {
    const receiver = new Receiver();
    let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
    let t: TestApp;
    let user: TestUser;
    const channels: Record<string, string> = {};

    before(async () => {
      const origin = await receiver.start();
      smtp = await startSmtpServer();
      const base = testConfig();
      t = await startApp(kind, {
        config: { smtpUrl: smtp.url, delivery: { ...base.delivery, telegramApiUrl: `${origin}/telegram`, pagerdutyEventsUrl: `${origin}/pagerduty` } },
      });
      user = await registerUser(t);
      const https = origin.replace('http:', 'https:');
      const configs: Record<string, unknown> = {
        email: { recipients: [RECIPIENT] },
        webhook: { url: `${origin}/webhook`, secret: WHSEC },
        slack: { webhook_url: `${https}/slack` },
        discord: { webhook_url: `${https}/discord` },
        telegram: { bot_token: BOT_TOKEN, chat_id: '-100123' },
        pagerduty: { routing_key: 'R'.repeat(32) },
      };
      for (const [type, config] of Object.entries(configs)) {
        const res = await api(t, 'POST', '/api/v1/channels', { token: user.token, body: { name: CHANNEL_NAME, channel_type: type, config } });
        assert.equal(res.status, 201, res.raw);
        channels[type] = res.body.id;
      }
    });
    after(async () => {
      await t.close();
      await receiver.stop();
      await smtp.close();
    });

    const byPath = (prefix: string) => receiver.requests.filter((r) => r.url.startsWith(prefix));

    function checkHttp(requests: ReceivedRequest[], what: string, check: (body: any, request: ReceivedRequest) => void): void {
      assert.ok(requests.length > 0, `${what}: nothing arrived`);
      for (const request of requests) {
        assertCleanHttpHeaders(request.headers, what);
        check(JSON.parse(request.body), request);
      }
    }

    function checkMail(mail: ReceivedMail, expectName: string): void {
      assert.deepEqual(mail.to, [RECIPIENT], 'no injected recipient');
      const headers = mailHeaders(mail.raw);
      for (const [name, value] of headers) assert.ok(MAIL_HEADERS.has(name), `unexpected mail header ${name}: ${value}`);
      const subjects = headers.filter(([name]) => name === 'subject');
      assert.equal(subjects.length, 1);
      const subject = decodeHeaderValue(subjects[0]![1]);
      assert.ok(subject.includes(expectName), `the subject keeps the text whole: ${JSON.stringify(subject)}`);
      const html = mimePart(mail.raw, 'text/html');
      assert.ok(html.includes(escapeHtml(expectName)), 'the HTML part shows the name escaped');
      assert.ok(!/<(b|script|img|i)\b/.test(html.replace(/<b>|<\/b>/g, '')), 'no markup of the user in the HTML part');
      assert.ok(!html.includes('<b>bold</b>') && !html.includes('<script>') && !html.includes('<img'), 'raw user markup in the HTML part');
      assert.ok(mimePart(mail.raw, 'text/plain').includes(expectName), 'the text part keeps the name verbatim');
    }

    test('alerts raised by a snapshot reach every channel type with nothing injected and markup escaped', async () => {
      const server = await createServer(t, user.token, { name: NAME, tags: TAGS });
      const snapshot = hostSnapshot(t, { uptime: 86_400, disks: [{ mount: MOUNT, percent_used: 97 }], firewall: false });
      const pushed = await push(t, server.api_key, snapshot);
      assert.deepEqual([pushed.status, pushed.body.new_alerts], [200, 2], pushed.raw);
      const alerts = (await api(t, 'GET', `/api/v1/servers/${server.id}/alerts`, { token: user.token })).body.alerts;
      const disk = alerts.find((a: any) => a.alert_type === 'disk_space_high');
      assert.equal(disk.subject, MOUNT.replace(/\p{Cc}/gu, '\uFFFD'), 'CR and LF of an agent-reported mount became U+FFFD');

      receiver.reset();
      await deliveryWorkerJob(t.store, t.config, { senders: createSenders(t.config, loopbackOutbound()), random: () => 0.5, clock: t.clock }).run(t.clock.now());
      const deliveries = await t.store.db.selectFrom('deliveries').select(['channel_id', 'status', 'error']).execute();
      assert.deepEqual(deliveries.filter((d) => d.status !== 'sent'), [], 'every delivery was sent');
      assert.equal(deliveries.length, 12);

      checkHttp(byPath('/webhook'), 'webhook', (body) => {
        assert.equal(body.data.server.name, NAME);
        assert.deepEqual(body.data.server.tags, TAGS);
        assert.ok([disk.subject, null].includes(body.data.alert.subject));
      });
      checkHttp(byPath('/slack'), 'slack', (body) => {
        const texts = [body.text, ...body.blocks.flatMap((b: any) => [b.text?.text, ...(b.fields ?? []).map((f: any) => f.text), ...(b.elements ?? []).map((e: any) => e.text)])]
          .filter((x): x is string => typeof x === 'string');
        for (const text of texts) assertEscapedMarkup(text, null, 'slack mrkdwn');
        assert.ok(texts.some((text) => unescapeMarkup(text).includes(NAME)), 'slack shows the name');
      });
      checkHttp(byPath('/discord'), 'discord', (body) => {
        assert.deepEqual(body.allowed_mentions, { parse: [] }, '@everyone in a name pings nobody');
        assert.ok(body.content.includes(NAME));
      });
      checkHttp(byPath('/telegram'), 'telegram', (body, request) => {
        assert.equal(request.url, `/telegram/bot${BOT_TOKEN}/sendMessage`);
        assert.equal(body.parse_mode, 'HTML');
        assertEscapedMarkup(body.text, /<\/?(b|i|pre)>/g, 'telegram HTML');
        assert.ok(unescapeMarkup(body.text).includes(NAME), 'telegram shows the name');
      });
      checkHttp(byPath('/pagerduty'), 'pagerduty', (body) => {
        assert.ok(body.payload.summary.includes(NAME));
        assert.equal(body.payload.custom_details.server.name, NAME);
      });
      assert.equal(smtp.received.length, 2, 'one e-mail per alert');
      for (const mail of smtp.received.splice(0)) checkMail(mail, NAME);
    });

    test('the channel test endpoint with a hostile channel name: same checks', async () => {
      receiver.reset();
      for (const type of ['webhook', 'telegram', 'pagerduty', 'email']) {
        const res = await api(t, 'POST', `/api/v1/channels/${channels[type]}/test`, { token: user.token });
        assert.deepEqual(res.body, { success: true }, `${type}: ${res.raw}`);
      }
      checkHttp(byPath('/webhook'), 'webhook test', (body) => assert.ok(body.data.alert.message.includes(CHANNEL_NAME)));
      checkHttp(byPath('/telegram'), 'telegram test', (body) => {
        assertEscapedMarkup(body.text, /<\/?(b|i|pre)>/g, 'telegram HTML');
        assert.ok(unescapeMarkup(body.text).includes(CHANNEL_NAME));
      });
      checkHttp(byPath('/pagerduty'), 'pagerduty test', (body) => assert.ok(body.payload.custom_details.message.includes(CHANNEL_NAME)));
      const mail = await smtp.next();
      assert.deepEqual(mail.to, [RECIPIENT]);
      for (const [name] of mailHeaders(mail.raw)) assert.ok(MAIL_HEADERS.has(name), `unexpected mail header ${name}`);
      const html = mimePart(mail.raw, 'text/html');
      assert.ok(html.includes(escapeHtml(CHANNEL_NAME)) && !html.includes('<b>x</b>'), `the channel name is escaped in the HTML part: ${JSON.stringify(html)}`);
    });
  });
}

for (const kind of storeKinds()) {
  describe(`a hostile Host header in the verification e-mail [${kind}]`, () => {
    let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
    let t: TestApp;
    before(async () => {
      smtp = await startSmtpServer();
      // No PUBLIC_URL: links are built on the request's own Host header (contract), which the client writes.
      t = await startApp(kind, { mailer: () => smtpMailer(smtp.url, 'Kiln <kiln@test.invalid>') });
    });
    after(async () => {
      await t.close();
      await smtp.close();
    });

    test('the link is escaped in the HTML part, the headers are the mailer\'s own', async () => {
      const host = 'x"><img src=x onerror=alert(1)>';
      const email = uniqueEmail('host');
      const res = await t.app.inject({
        method: 'POST', url: '/api/v1/auth/register', headers: { host, 'content-type': 'application/json' }, payload: JSON.stringify({ email, password: PASSWORD }),
      });
      assert.equal(res.statusCode, 201, res.body);
      const mail = await smtp.next();
      assert.deepEqual(mail.to, [email]);
      for (const [name] of mailHeaders(mail.raw)) assert.ok(MAIL_HEADERS.has(name), `unexpected mail header ${name}`);
      const html = mimePart(mail.raw, 'text/html');
      assert.ok(!html.includes('<img'), `raw markup from the Host header: ${html}`);
      assert.ok(html.includes(`href="http://${escapeHtml(host)}/verify-email?token=`), html);
    });
  });
}
