import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { PAGERDUTY_SUMMARY_MAX } from '../../src/notify/senders/pagerduty.js';
import { webhookSignature } from '../../src/notify/senders/webhook.js';
import { hostileNotification, sendersAt } from '../helpers/notifications.js';
import { Receiver, closedOrigin } from '../helpers/receiver.js';

const receiver = new Receiver();
before(() => receiver.start());
after(() => receiver.stop());
const ROUTING_KEY = 'R0ut1ngK3yR0ut1ngK3yR0ut1ngK3y12';

describe('pagerduty sender', () => {
  const target = { type: 'pagerduty' as const, config: { routing_key: ROUTING_KEY } };
  const ctx = { deliveryId: 'dlv_abcdefghijklmnopqrst', now: new Date('2026-11-22T12:00:01.000Z') };

  test('a raised or recurring alert triggers with dedup_key = alert id and the Events API v2 payload', async () => {
    for (const event of ['alert.raised', 'alert.occurred'] as const) {
      receiver.reset({ status: 202, body: '{"status":"success","message":"Event processed","dedup_key":"alt_abcdefghijklmnopqrst"}' });
      const result = await sendersAt(receiver.origin, { publicUrl: 'https://kiln.example.com' }).send(target, hostileNotification(event, { severity: 'warning' }), ctx);
      assert.deepEqual([result.ok, result.httpStatus], [true, 202]);
      assert.equal(receiver.last().url, '/pagerduty/v2/enqueue');
      const body = receiver.lastJson();
      assert.deepEqual(Object.keys(body).sort(), ['client', 'client_url', 'dedup_key', 'event_action', 'payload', 'routing_key']);
      assert.equal(body.routing_key, ROUTING_KEY);
      assert.equal(body.event_action, 'trigger');
      assert.equal(body.dedup_key, 'alt_abcdefghijklmnopqrst');
      assert.equal(body.client_url, 'https://kiln.example.com/servers/srv_abcdefghijklmnopqrst');
      const { payload } = body;
      assert.equal(payload.source, 'web-1.example.com');
      assert.equal(payload.severity, 'warning');
      assert.equal(payload.class, 'disk_space_high');
      assert.match(payload.component, /^\/var /);
      assert.equal(payload.timestamp, '2026-11-22T12:00:00.000Z');
      assert.match(payload.summary, /^Disk \/var is 97% full .* on web-1 /);
      assert.equal(payload.custom_details.event, event);
      assert.deepEqual(payload.custom_details.evidence.percent_used, 97);
    }
  });

  test('a resolution resolves the same dedup_key; a test never touches a real alert; summary stays within 1024', async () => {
    const senders = sendersAt(receiver.origin);
    receiver.reset({ status: 202, body: '{}' });
    await senders.send(target, hostileNotification('alert.resolved'), ctx);
    assert.deepEqual(receiver.lastJson(), { routing_key: ROUTING_KEY, event_action: 'resolve', dedup_key: 'alt_abcdefghijklmnopqrst' });
    await senders.send(target, { ...hostileNotification('alert.raised', { long: true }), event: 'channel.test' }, ctx);
    const test = receiver.lastJson();
    assert.equal(test.dedup_key, 'kiln-test-dlv_abcdefghijklmnopqrst');
    assert.ok(test.payload.summary.length <= PAGERDUTY_SUMMARY_MAX);
    receiver.reset({ status: 400, body: '{"status":"invalid event","message":"Event object is invalid","errors":["Length of \'routing_key\' is incorrect"]}' });
    const refused = await senders.send(target, hostileNotification(), ctx);
    assert.deepEqual([refused.ok, refused.retryable], [false, false]);
    assert.match(refused.error!, /^HTTP 400: .*routing_key/);
  });
});

describe('webhook sender', () => {
  const now = () => new Date();

  test('JSON body {type, timestamp, data: {alert, server}} with Standard Webhooks headers, verified by the standardwebhooks package', async () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const notification = hostileNotification('alert.raised');
    receiver.reset({ status: 204 });
    const sent = await sendersAt(receiver.origin).send({ type: 'webhook', config: { url: `${receiver.origin}/hook`, secret } }, notification, { deliveryId: 'dlv_stable0000000000000', now: now() });
    assert.equal(sent.ok, true);
    const request = receiver.last();
    assert.equal(request.headers['webhook-id'], 'dlv_stable0000000000000');
    assert.match(String(request.headers['webhook-timestamp']), /^\d{10}$/);
    assert.match(String(request.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]{43}=$/);
    const payload = new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
    const { server } = notification;
    assert.deepEqual(payload, {
      type: 'alert.raised', timestamp: notification.at,
      data: { alert: notification.alert, server: { id: server.id, name: server.name, hostname: server.hostname, tags: server.tags } },
    });
    // A body altered in transit no longer verifies.
    assert.throws(() => new Webhook(secret).verify(request.body.replace('97', '98'), request.headers as Record<string, string>));
  });

  test('a plain secret signs with its UTF-8 bytes; a retry keeps the webhook-id', async () => {
    const secret = 'plain-shared-secret-42';
    const senders = sendersAt(receiver.origin);
    receiver.reset({ status: 200 });
    for (let i = 0; i < 2; i++) {
      await senders.send({ type: 'webhook', config: { url: `${receiver.origin}/hook`, secret } }, hostileNotification('alert.resolved'), { deliveryId: 'dlv_retry00000000000000', now: now() });
    }
    assert.deepEqual(receiver.requests.map((r) => r.headers['webhook-id']), ['dlv_retry00000000000000', 'dlv_retry00000000000000']);
    for (const request of receiver.requests) {
      new Webhook(new TextEncoder().encode(secret), { format: 'raw' }).verify(request.body, request.headers as Record<string, string>);
    }
    // And the same signature from first principles: HMAC over "<id>.<timestamp>.<body>".
    const { headers, body } = receiver.last();
    assert.equal(headers['webhook-signature'], webhookSignature(secret, 'dlv_retry00000000000000', Number(headers['webhook-timestamp']), body));
  });

  test('network failures are retryable with their reason; 410 is final', async () => {
    const senders = sendersAt(receiver.origin);
    const refused = await senders.send({ type: 'webhook', config: { url: `${await closedOrigin()}/x`, secret: null } }, hostileNotification(), { deliveryId: 'dlv_x', now: now() });
    assert.deepEqual([refused.ok, refused.retryable, refused.httpStatus], [false, true, null]);
    assert.match(refused.error!, /ECONNREFUSED/);
    receiver.reset({ status: 410, body: 'gone' });
    const gone = await senders.send({ type: 'webhook', config: { url: `${receiver.origin}/x`, secret: null } }, hostileNotification(), { deliveryId: 'dlv_x', now: now() });
    assert.deepEqual([gone.ok, gone.retryable, gone.error], [false, false, 'HTTP 410: gone']);
  });
});
