import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventAlertExpiryJob } from '../src/jobs/event-alert-expiry.js';
import { unreachableWatchdogJob } from '../src/jobs/unreachable-watchdog.js';
import { DAY_MS, MINUTE_MS } from '../src/lib/clock.js';
import { activeKeys, alertsOf, hostSnapshot, outboxEvents, pushOk } from './helpers/alerts.js';
import { api, describeEachStore, registerUser, type TestApp } from './helpers/app.js';
import { reporter, type Reporter } from './helpers/ingest.js';
import { suspendServer, trashServer } from './helpers/servers.js';

const at = (t: TestApp, ms: number) => t.clock.set(new Date(ms).toISOString());

describeEachStore('job: server_unreachable watchdog', (t) => {
  const watchdog = () => unreachableWatchdogJob(t.store);
  const unreachable = async (r: Reporter) => (await alertsOf(t, r)).filter((a) => a.alert_type === 'server_unreachable');

  test('a server that never reported: 20 minutes after registration, once', async () => {
    const r = await reporter(t, { name: 'never' });
    const registered = t.clock.now().getTime();
    at(t, registered + 20 * MINUTE_MS - 1);
    await watchdog().run(t.clock.now());
    assert.deepEqual(await unreachable(r), []);
    at(t, registered + 20 * MINUTE_MS);
    await watchdog().run(t.clock.now());
    await watchdog().run(t.clock.now());
    const [alert, ...more] = await unreachable(r);
    assert.deepEqual(more, []);
    assert.deepEqual([alert.severity, alert.kind, alert.subject, alert.status, alert.first_seen_at], ['critical', 'state', null, 'active', t.clock.now().toISOString()]);
    assert.equal(alert.title, 'never has never reported');
    assert.equal(alert.evidence.never_reported, true);
    assert.deepEqual(await outboxEvents(t, r.server.id), ['alert.raised server_unreachable']);
  });

  test('3 push intervals after the last snapshot, with the server\'s own interval; the next snapshot resolves it, a new silence raises anew', async () => {
    const r = await reporter(t);
    assert.equal((await api(t, 'PUT', `/api/v1/servers/${r.server.id}/config-overrides`, { token: r.user.token, body: { interval_seconds: 120 } })).status, 200);
    await pushOk(t, r, hostSnapshot(t, { uptime: 1000 }));
    const last = t.clock.now().getTime();
    at(t, last + 6 * MINUTE_MS - 1);
    await watchdog().run(t.clock.now());
    assert.deepEqual(await unreachable(r), []);
    at(t, last + 6 * MINUTE_MS);
    await watchdog().run(t.clock.now());
    const [first] = await unreachable(r);
    assert.equal(first.evidence.interval_seconds, 120);
    t.clock.advance(MINUTE_MS);
    assert.deepEqual(await pushOk(t, r, hostSnapshot(t, { uptime: 1420 })), [0, 0]);
    const back = t.clock.now().getTime();
    at(t, back + 6 * MINUTE_MS);
    await watchdog().run(t.clock.now());
    assert.deepEqual((await unreachable(r)).map((a) => [a.id === first.id, a.status]), [[false, 'active'], [true, 'resolved']]);
    // Longer interval set while silent: the deadline moves with it.
    t.clock.advance(MINUTE_MS);
    await pushOk(t, r, hostSnapshot(t, { uptime: 1900 }));
    await api(t, 'PUT', `/api/v1/servers/${r.server.id}/config-overrides`, { token: r.user.token, body: { interval_seconds: 600 } });
    const pushed = t.clock.now().getTime();
    at(t, pushed + 30 * MINUTE_MS - 1);
    await watchdog().run(t.clock.now());
    assert.equal((await unreachable(r)).filter((a) => a.status === 'active').length, 0);
  });

  test('not for trashed, suspended or muted servers; a restored server gets its full time again', async () => {
    const owner = await registerUser(t);
    const trashed = await reporter(t, {}, owner);
    const suspended = await reporter(t, {}, owner);
    const muted = await reporter(t, {}, owner);
    for (const r of [trashed, suspended, muted]) await pushOk(t, r, hostSnapshot(t, { uptime: 1000 }));
    await trashServer(t, owner.token, trashed.server.id);
    await suspendServer(t, owner, suspended.server.id);
    await api(t, 'POST', `/api/v1/servers/${muted.server.id}/mutes`, { token: owner.token, body: { alert_type: 'server_unreachable' } });
    t.clock.advance(DAY_MS);
    await watchdog().run(t.clock.now());
    const count = async () => (await t.store.db.selectFrom('alerts').select('server_id')
      .where('server_id', 'in', [trashed.server.id, suspended.server.id, muted.server.id]).execute()).length;
    assert.equal(await count(), 0);

    assert.equal((await api(t, 'POST', `/api/v1/servers/${trashed.server.id}/restore`, { token: owner.token })).status, 200);
    assert.equal((await api(t, 'POST', `/api/v1/servers/${suspended.server.id}/restore`, { token: owner.token })).status, 200);
    const restored = t.clock.now().getTime();
    at(t, restored + 15 * MINUTE_MS - 1);
    await watchdog().run(t.clock.now());
    assert.equal(await count(), 0);
    at(t, restored + 15 * MINUTE_MS);
    await watchdog().run(t.clock.now());
    assert.deepEqual(await activeKeys(t, trashed), ['server_unreachable - critical']);
    assert.deepEqual(await activeKeys(t, suspended), ['server_unreachable - critical']);
    assert.deepEqual(await activeKeys(t, muted), []);
  });

  test('many servers in batches; two watchdogs at once raise each alert once', async () => {
    const owner = await registerUser(t);
    const servers: Reporter[] = [];
    for (let i = 0; i < 7; i++) servers.push(await reporter(t, {}, owner));
    t.clock.advance(20 * MINUTE_MS);
    await Promise.all([
      unreachableWatchdogJob(t.store, { batch: 2 }).run(t.clock.now()),
      unreachableWatchdogJob(t.store, { batch: 3 }).run(t.clock.now()),
    ]);
    for (const r of servers) {
      assert.deepEqual(await activeKeys(t, r), ['server_unreachable - critical']);
      assert.deepEqual(await outboxEvents(t, r.server.id), ['alert.raised server_unreachable']);
    }
  });
});

describeEachStore('job: event alert expiry', (t) => {
  test('event alerts resolve 24 h after their last occurrence (ttl), state alerts never; batches; two runs at once notify once', async () => {
    const owner = await registerUser(t);
    const servers: Reporter[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await reporter(t, {}, owner);
      assert.deepEqual(await pushOk(t, r, hostSnapshot(t, { uptime: 5000, oomKills: 1, firewall: false })), [2, 2]);
      servers.push(r);
    }
    const raisedAt = t.clock.now().getTime();
    // A new occurrence on one server moves its card's expiry.
    t.clock.advance(10 * MINUTE_MS);
    await pushOk(t, servers[0]!, hostSnapshot(t, { uptime: 5600, oomKills: 3, firewall: false }));
    at(t, raisedAt + DAY_MS);
    await Promise.all([
      eventAlertExpiryJob(t.store, { batch: 2 }).run(t.clock.now()),
      eventAlertExpiryJob(t.store, { batch: 1 }).run(t.clock.now()),
    ]);
    assert.deepEqual(await activeKeys(t, servers[0]!), ['no_firewall - warning', 'oom_kills - critical']);
    for (const r of servers.slice(1)) {
      assert.deepEqual(await activeKeys(t, r), ['no_firewall - warning']);
      const oom = (await alertsOf(t, r)).find((a) => a.alert_type === 'oom_kills');
      assert.deepEqual([oom.resolved_by, oom.resolved_at], ['ttl', t.clock.now().toISOString()]);
      assert.deepEqual(await outboxEvents(t, r.server.id), ['alert.raised no_firewall', 'alert.raised oom_kills', 'alert.resolved oom_kills']);
    }
    at(t, raisedAt + 10 * MINUTE_MS + DAY_MS);
    await eventAlertExpiryJob(t.store).run(t.clock.now());
    assert.deepEqual(await activeKeys(t, servers[0]!), ['no_firewall - warning']);
  });
});
