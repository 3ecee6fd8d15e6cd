import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { serviceJobs } from '../../src/jobs/index.js';
import { addMs, iso, MINUTE_MS } from '../../src/lib/clock.js';
import { deliveryWorkerJob, MAX_ATTEMPTS, RETRY_DELAYS_MS } from '../../src/notify/worker.js';
import { workerRepo } from '../../src/notify/worker-repo.js';
import { hostSnapshot, pushOk } from '../helpers/alerts.js';
import { api, describeEachStore, type TestApp } from '../helpers/app.js';
import { reporter, type Reporter } from '../helpers/ingest.js';
import { Receiver } from '../helpers/receiver.js';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;

/** The worker as the service runs it, but with the jitter pinned to its middle (no jitter) for exact times. */
function worker(t: TestApp) {
  return deliveryWorkerJob(t.store, t.config, { random: () => 0.5, clock: t.clock });
}

/** A fresh account with a server whose firewall is off (one no_firewall alert raised) and a webhook channel to `receiver`. */
async function raisedAlert(t: TestApp, receiver: Receiver): Promise<{ r: Reporter; channelId: string; alertId: string }> {
  const r = await reporter(t);
  const res = await api(t, 'POST', '/api/v1/channels', {
    token: r.user.token, body: { name: 'hook', channel_type: 'webhook', config: { url: `${receiver.origin}/hook`, secret: SECRET } },
  });
  assert.equal(res.status, 201, res.raw);
  assert.deepEqual(await pushOk(t, r, hostSnapshot(t, { uptime: 86_400, firewall: false })), [1, 1]);
  const alert = await t.store.db.selectFrom('alerts').select('id').where('server_id', '=', r.server.id).executeTakeFirstOrThrow();
  return { r, channelId: res.body.id, alertId: alert.id };
}

async function deliveries(t: TestApp, r: Reporter, channelId: string): Promise<any[]> {
  const res = await api(t, 'GET', `/api/v1/channels/${channelId}/deliveries`, { token: r.user.token });
  assert.equal(res.status, 200, res.raw);
  return res.body.deliveries;
}

async function dispatchedAt(t: TestApp, r: Reporter): Promise<Array<string | null>> {
  const rows = await t.store.db.selectFrom('notification_outbox').select('dispatched_at').where('server_id', '=', r.server.id).orderBy('id').execute();
  return rows.map((row) => row.dispatched_at);
}

describeEachStore('delivery worker', (t) => {
  const receiver = new Receiver();
  before(async () => {
    await receiver.start();
  });
  after(async () => {
    await receiver.stop();
  });

  test('is one of the service jobs, every 2 seconds', () => {
    const job = serviceJobs(t.store, t.config).find((j) => j.name === 'delivery-worker');
    assert.equal(job?.intervalMs, 2000);
  });

  test('an alert raised by ingest reaches the webhook once, signed; the outbox row is dispatched', async () => {
    receiver.reset();
    const { r, channelId, alertId } = await raisedAlert(t, receiver);
    await worker(t).run(t.clock.now());
    assert.equal(receiver.requests.length, 1);
    // Signed by the worker's clock (the fake one): the package's own signer, at that time, must give the same signature.
    const { body, headers } = receiver.last();
    assert.equal(headers['webhook-timestamp'], String(Math.floor(t.clock.now().getTime() / 1000)));
    assert.equal(headers['webhook-signature'], new Webhook(SECRET).sign(String(headers['webhook-id']), t.clock.now(), body));
    const payload = JSON.parse(body);
    assert.deepEqual([payload.type, payload.data.alert.id, payload.data.server.id], ['alert.raised', alertId, r.server.id]);
    const [delivery] = await deliveries(t, r, channelId);
    assert.equal(receiver.last().headers['webhook-id'], delivery.id);
    assert.deepEqual([delivery.attempt, delivery.status, delivery.http_status, delivery.event, delivery.alert_id], [1, 'sent', 200, 'alert.raised', alertId]);
    assert.deepEqual(await dispatchedAt(t, r), [iso(t.clock.now())]);
    await worker(t).run(t.clock.now());
    assert.equal(receiver.requests.length, 1, 'a dispatched row is not sent again');
  });

  test('a 500 is retried after the backoff with the same delivery id, then succeeds', async () => {
    receiver.reset({ status: 500, body: 'down' });
    const { r, channelId } = await raisedAlert(t, receiver);
    const job = worker(t);
    await job.run(t.clock.now());
    const [first] = await deliveries(t, r, channelId);
    assert.deepEqual([first.status, first.http_status, first.error], ['retrying', 500, 'HTTP 500: down']);
    assert.equal(first.next_attempt_at, iso(addMs(t.clock.now(), RETRY_DELAYS_MS[0]!)));
    assert.deepEqual(await dispatchedAt(t, r), [null]);

    t.clock.advance(RETRY_DELAYS_MS[0]! - 1);
    await job.run(t.clock.now());
    assert.equal(receiver.requests.length, 1, 'not before the backoff');

    receiver.answer = { status: 200 };
    t.clock.advance(1);
    await job.run(t.clock.now());
    assert.equal(receiver.requests.length, 2);
    assert.equal(receiver.requests[0]!.headers['webhook-id'], receiver.requests[1]!.headers['webhook-id']);
    const [second] = await deliveries(t, r, channelId);
    assert.deepEqual([second.id, second.attempt, second.status, second.next_attempt_at], [first.id, 2, 'sent', null]);
    assert.deepEqual(await dispatchedAt(t, r), [iso(t.clock.now())]);
  });

  test(`always 500: ${MAX_ATTEMPTS} attempts over about an hour, then failed and dispatched`, async () => {
    receiver.reset({ status: 503 });
    const { r, channelId } = await raisedAlert(t, receiver);
    const job = worker(t);
    const start = t.clock.now().getTime();
    for (let i = 0; i < MAX_ATTEMPTS; i++) {
      await job.run(t.clock.now());
      if (i < RETRY_DELAYS_MS.length) t.clock.advance(RETRY_DELAYS_MS[i]!);
    }
    assert.equal(receiver.requests.length, MAX_ATTEMPTS);
    assert.ok(t.clock.now().getTime() - start >= 60 * MINUTE_MS);
    const attempts = await deliveries(t, r, channelId);
    assert.deepEqual(attempts.map((d) => `${d.attempt} ${d.status}`), [
      `${MAX_ATTEMPTS} failed`, ...Array.from({ length: MAX_ATTEMPTS - 1 }, (_, i) => `${MAX_ATTEMPTS - 1 - i} retrying`),
    ]);
    assert.deepEqual(await dispatchedAt(t, r), [iso(t.clock.now())]);
    t.clock.advance(120 * MINUTE_MS);
    await job.run(t.clock.now());
    assert.equal(receiver.requests.length, MAX_ATTEMPTS);
  });

  test('a 404 is final at once; a 429 waits its Retry-After', async () => {
    receiver.reset({ status: 404, body: 'no such hook' });
    const gone = await raisedAlert(t, receiver);
    await worker(t).run(t.clock.now());
    const [final] = await deliveries(t, gone.r, gone.channelId);
    assert.deepEqual([final.attempt, final.status, final.error], [1, 'failed', 'HTTP 404: no such hook']);
    assert.deepEqual(await dispatchedAt(t, gone.r), [iso(t.clock.now())]);

    receiver.reset({ status: 429, headers: { 'retry-after': '900' } });
    const busy = await raisedAlert(t, receiver);
    await worker(t).run(t.clock.now());
    const [limited] = await deliveries(t, busy.r, busy.channelId);
    assert.deepEqual([limited.status, limited.next_attempt_at], ['retrying', iso(addMs(t.clock.now(), 900_000))]);
  });

  test('an alert acknowledged before it went out is not sent; its resolution is', async () => {
    receiver.reset();
    const { r, channelId, alertId } = await raisedAlert(t, receiver);
    assert.equal((await api(t, 'POST', `/api/v1/alerts/${alertId}/acknowledge`, { token: r.user.token })).status, 200);
    await worker(t).run(t.clock.now());
    assert.equal(receiver.requests.length, 0);
    assert.deepEqual(await deliveries(t, r, channelId), []);
    assert.deepEqual(await dispatchedAt(t, r), [iso(t.clock.now())]);

    t.clock.advance(1000);
    assert.equal((await api(t, 'POST', `/api/v1/alerts/${alertId}/resolve`, { token: r.user.token })).status, 200);
    await worker(t).run(t.clock.now());
    assert.equal(receiver.requests.length, 1);
    assert.equal(receiver.lastJson().type, 'alert.resolved');
  });

  test('an account without enabled channels: the row is dispatched, nothing sent', async () => {
    receiver.reset();
    const r = await reporter(t);
    await pushOk(t, r, hostSnapshot(t, { uptime: 86_400, firewall: false }));
    await worker(t).run(t.clock.now());
    assert.deepEqual(await dispatchedAt(t, r), [iso(t.clock.now())]);
    assert.equal(receiver.requests.length, 0);
  });

  test('a worker that dies mid-send loses nothing: after its lease another worker sends it, once', async () => {
    receiver.reset();
    const { r, channelId } = await raisedAlert(t, receiver);
    const repo = workerRepo(t.store);
    // The first process plans the delivery and takes its lease, then dies before sending.
    const now = iso(t.clock.now());
    await repo.fanOut(now, 100);
    const leaseUntil = addMs(t.clock.now(), t.config.delivery.timeoutMs + MINUTE_MS);
    const held = await repo.claimDue(now, iso(leaseUntil), 50);
    assert.ok(held.some((task) => task.channel_id === channelId));

    const restarted = worker(t);
    await restarted.run(t.clock.now());
    assert.equal(receiver.requests.length, 0, 'the lease is still held');
    t.clock.set(iso(leaseUntil));
    await restarted.run(t.clock.now());
    assert.equal(receiver.requests.length, 1);
    assert.equal((await deliveries(t, r, channelId)).length, 1);
    // The dead worker's late completion is refused: its lease was taken over.
    const late = held.find((task) => task.channel_id === channelId)!;
    assert.equal(await repo.complete(late, { state: 'sent', attempts: 1, nextAttemptAt: now, attempt: null }), false);
  });

  test('two workers running at once send every delivery exactly once', async () => {
    receiver.reset();
    const channels: Array<{ r: Reporter; channelId: string }> = [];
    for (let i = 0; i < 8; i++) channels.push(await raisedAlert(t, receiver));
    const [a, b] = [worker(t), worker(t)];
    await Promise.all([a.run(t.clock.now()), b.run(t.clock.now()), a.run(t.clock.now())]);
    const ids = receiver.requests.map((req) => String(req.headers['webhook-id']));
    assert.equal(ids.length, 8);
    assert.equal(new Set(ids).size, 8);
    for (const { r, channelId } of channels) {
      assert.deepEqual((await deliveries(t, r, channelId)).map((d) => `${d.attempt} ${d.status}`), ['1 sent']);
    }
  });
});
