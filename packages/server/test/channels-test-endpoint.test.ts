import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { api, describeEachStore, expectEnvelope, registerUser, testConfig, type TestApp } from './helpers/app.js';
import { Receiver, closedOrigin } from './helpers/receiver.js';
import { startSmtpServer } from './helpers/smtp.js';

const receiver = new Receiver();
await receiver.start();
const smtp = await startSmtpServer({
  judgeRecipient: (address) => (address.startsWith('full@') ? { code: 452, message: 'mailbox full, try later' }
    : address.startsWith('nobody@') ? { code: 550, message: 'no such user here' } : null),
});
after(async () => {
  await receiver.stop();
  await smtp.close();
});

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

async function webhookChannel(t: TestApp, token: string, url: string, secret?: string): Promise<string> {
  const res = await api(t, 'POST', '/api/v1/channels', { token, body: { name: 'hook', channel_type: 'webhook', config: { url, ...(secret && { secret }) } } });
  assert.equal(res.status, 201, res.raw);
  return res.body.id;
}

async function sendTest(t: TestApp, token: string, channelId: string) {
  const res = await api(t, 'POST', `/api/v1/channels/${channelId}/test`, { token });
  assert.equal(res.status, 200, res.raw);
  return res.body as { success: boolean; error?: string };
}

async function deliveriesOf(t: TestApp, token: string, channelId: string, query = '') {
  const res = await api(t, 'GET', `/api/v1/channels/${channelId}/deliveries${query}`, { token });
  assert.equal(res.status, 200, res.raw);
  return res.body as { deliveries: any[]; next_cursor: string | null };
}

describeEachStore('POST /channels/:id/test', (t) => {
  describe('webhook', () => {
    test('sends a channel.test event signed per Standard Webhooks, and records the attempt', async () => {
      // The independent verifier checks the timestamp against the real time, so the service clock is set to it.
      t.clock.set(new Date().toISOString());
      const u = await registerUser(t);
      const id = await webhookChannel(t, u.token, `${receiver.origin}/hooks/in?src=kiln`, SECRET);
      receiver.reset();
      assert.deepEqual(await sendTest(t, u.token, id), { success: true });

      assert.equal(receiver.requests.length, 1);
      const request = receiver.last();
      assert.equal(request.method, 'POST');
      assert.equal(request.url, '/hooks/in?src=kiln');
      assert.equal(request.headers['content-type'], 'application/json');
      assert.match(String(request.headers['webhook-id']), /^dlv_[A-Za-z0-9_-]{20}$/);
      assert.equal(request.headers['webhook-timestamp'], String(Math.floor(t.clock.now().getTime() / 1000)));
      const payload = new Webhook(SECRET).verify(request.body, request.headers as Record<string, string>) as any;
      assert.equal(payload.type, 'channel.test');
      assert.equal(payload.timestamp, t.clock.now().toISOString());
      assert.deepEqual(Object.keys(payload.data), ['alert', 'server']);
      assert.deepEqual(Object.keys(payload.data.server), ['id', 'name', 'hostname', 'tags']);
      assert.equal(payload.data.alert.alert_type, 'channel_test');
      assert.equal(payload.data.alert.evidence.channel_id, id);

      const { deliveries } = await deliveriesOf(t, u.token, id);
      assert.equal(deliveries.length, 1);
      const [attempt] = deliveries;
      assert.deepEqual({ ...attempt, duration_ms: 0 }, {
        id: request.headers['webhook-id'], attempt: 1, event: 'channel.test', alert_id: null, status: 'sent', http_status: 200,
        smtp_reply: null, error: null, duration_ms: 0, created_at: t.clock.now().toISOString(), next_attempt_at: null,
      });
      assert.ok(Number.isInteger(attempt.duration_ms) && attempt.duration_ms >= 0);
      const channel = (await api(t, 'GET', `/api/v1/channels/${id}`, { token: u.token })).body;
      assert.equal(channel.last_delivery_status, 'sent');
      assert.equal(channel.last_delivery_at, t.clock.now().toISOString());
    });

    test('without a secret: no webhook-signature header', async () => {
      const u = await registerUser(t);
      const id = await webhookChannel(t, u.token, `${receiver.origin}/plain`);
      receiver.reset();
      assert.equal((await sendTest(t, u.token, id)).success, true);
      assert.equal(receiver.last().headers['webhook-signature'], undefined);
      assert.ok(receiver.last().headers['webhook-id']);
    });

    test('HTTP 500: success false with the status and an excerpt of the body (at most 300 characters)', async () => {
      const u = await registerUser(t);
      const id = await webhookChannel(t, u.token, `${receiver.origin}/broken`);
      receiver.reset({ status: 500, body: `upstream exploded:\n${'x'.repeat(2000)}` });
      const res = await sendTest(t, u.token, id);
      assert.equal(res.success, false);
      assert.match(res.error!, /^HTTP 500: upstream exploded: x+…$/);
      assert.ok(res.error!.length <= 'HTTP 500: '.length + 300);
      const [attempt] = (await deliveriesOf(t, u.token, id)).deliveries;
      assert.equal(attempt.status, 'failed');
      assert.equal(attempt.http_status, 500);
      assert.equal(attempt.error, res.error);
      assert.equal((await api(t, 'GET', `/api/v1/channels/${id}`, { token: u.token })).body.last_delivery_status, 'failed');
    });

    test('HTTP 404, a redirect, connection refused, a .invalid host and cloud metadata all come back as reasons', async () => {
      const u = await registerUser(t);
      const cases: Array<[string, () => void, RegExp]> = [
        [`${receiver.origin}/gone`, () => receiver.reset({ status: 404, body: '{"error":"no such hook"}' }), /^HTTP 404: \{"error":"no such hook"\}$/],
        [`${receiver.origin}/moved`, () => receiver.reset({ status: 301, headers: { location: 'https://elsewhere.example/x' } }),
          /^HTTP 301: redirects are not followed \(to https:\/\/elsewhere\.example\/x\)$/],
        [`${await closedOrigin()}/x`, () => receiver.reset(), /connection refused by 127\.0\.0\.1:\d+ \(ECONNREFUSED\)/],
        ['http://hooks.example.invalid/x', () => receiver.reset(), /DNS lookup of hooks\.example\.invalid failed \((ENOTFOUND|EAI_AGAIN)\)/],
        ['http://169.254.169.254/latest/meta-data/', () => receiver.reset(), /169\.254\.169\.254 is a link-local, .* never contacted/],
        ['http://[::ffff:169.254.169.254]/latest/', () => receiver.reset(), /never contacted/],
      ];
      for (const [url, arrange, reason] of cases) {
        const id = await webhookChannel(t, u.token, url);
        arrange();
        const res = await sendTest(t, u.token, id);
        assert.equal(res.success, false, url);
        assert.match(res.error!, reason);
        const redirected = receiver.requests.filter((r) => r.url === '/x').length;
        assert.equal(redirected, 0, 'nothing follows the redirect');
      }
    });
  });

  describe('e-mail', () => {
    test('delivers through SMTP_URL and records the server\'s reply', async () => {
      const u = await registerUser(t);
      const res = await api(t, 'POST', '/api/v1/channels', { token: u.token, body: { name: 'mail', channel_type: 'email', config: { recipients: ['ops@example.com', 'dev@example.com'] } } });
      const outcome = await sendTest(t, u.token, res.body.id);
      assert.deepEqual(outcome, { success: true });
      const mail = await smtp.next();
      assert.deepEqual(mail.to, ['ops@example.com', 'dev@example.com']);
      assert.match(mail.raw, /Content-Type: text\/plain/);
      assert.match(mail.raw, /Content-Type: text\/html/);
      const [attempt] = (await deliveriesOf(t, u.token, res.body.id)).deliveries;
      assert.equal(attempt.status, 'sent');
      assert.match(attempt.smtp_reply, /^250 /);
      assert.equal(attempt.http_status, null);
      assert.match(mail.raw, new RegExp(`X-Kiln-Delivery: ${attempt.id}`));
    });

    test('an SMTP rejection is success false with the server\'s reply', async () => {
      const u = await registerUser(t);
      for (const [address, reply] of [['nobody@example.com', /^SMTP 550 .*no such user here/], ['full@example.com', /^SMTP 452 .*mailbox full/]] as const) {
        const res = await api(t, 'POST', '/api/v1/channels', { token: u.token, body: { name: 'mail', channel_type: 'email', config: { recipients: [address] } } });
        const outcome = await sendTest(t, u.token, res.body.id);
        assert.equal(outcome.success, false);
        assert.match(outcome.error!, reply);
        const [attempt] = (await deliveriesOf(t, u.token, res.body.id)).deliveries;
        assert.match(attempt.smtp_reply, /^(550|452) /);
        assert.equal(attempt.status, 'failed');
      }
    });
  });

  describe('GET /channels/:id/deliveries', () => {
    test('newest first, paged by an opaque cursor; a tampered cursor is 400', async () => {
      const u = await registerUser(t);
      const id = await webhookChannel(t, u.token, `${receiver.origin}/paged`);
      receiver.reset();
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        t.clock.advance(1000);
        await sendTest(t, u.token, id);
        ids.unshift(String(receiver.last().headers['webhook-id']));
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { deliveries: any[]; next_cursor: string | null } = await deliveriesOf(t, u.token, id, `?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        assert.ok(page.deliveries.length <= 2);
        seen.push(...page.deliveries.map((d) => d.id));
        cursor = page.next_cursor;
      } while (cursor);
      assert.deepEqual(seen, ids);
      const first = await deliveriesOf(t, u.token, id, '?limit=2');
      const tampered = `${first.next_cursor!.slice(0, -2)}xx`;
      expectEnvelope(await api(t, 'GET', `/api/v1/channels/${id}/deliveries?cursor=${tampered}`, { token: u.token }), 400, 'validation_failed');
      expectEnvelope(await api(t, 'GET', `/api/v1/channels/${id}/deliveries?limit=0`, { token: u.token }), 400, 'validation_failed');
    });
  });
}, { config: { smtpUrl: smtp.url } });

describeEachStore('POST /channels/:id/test with a short delivery timeout', (t) => {
  test('a receiver that never answers: success false, timeout named', async () => {
    const u = await registerUser(t);
    const id = await webhookChannel(t, u.token, `${receiver.origin}/slow`);
    receiver.reset('hang');
    const res = await sendTest(t, u.token, id);
    receiver.reset();
    assert.equal(res.success, false);
    assert.match(res.error!, /^no complete answer from 127\.0\.0\.1:\d+ within 300 ms$/);
  });
}, { config: { delivery: { ...testConfig().delivery, timeoutMs: 300 } } });

describeEachStore('POST /channels/:id/test with ALLOW_PRIVATE_TARGETS off', (t) => {
  test('loopback, by address or by name, is refused before any connection', async () => {
    const u = await registerUser(t);
    receiver.reset();
    const port = new URL(receiver.origin).port;
    for (const url of [`http://127.0.0.1:${port}/x`, `http://localhost:${port}/x`, `http://[::ffff:127.0.0.1]:${port}/x`, `http://10.1.2.3:${port}/x`]) {
      const id = await webhookChannel(t, u.token, url);
      const res = await sendTest(t, u.token, id);
      assert.equal(res.success, false, url);
      assert.match(res.error!, /loopback or private address; the operator has not allowed private targets \(ALLOW_PRIVATE_TARGETS\)/);
    }
    assert.equal(receiver.requests.length, 0);
  });
}, { config: { delivery: { ...testConfig().delivery, allowPrivateTargets: false } } });
