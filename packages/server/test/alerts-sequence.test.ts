import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventAlertExpiryJob } from '../src/jobs/event-alert-expiry.js';
import { unreachableWatchdogJob } from '../src/jobs/unreachable-watchdog.js';
import { DAY_MS, MINUTE_MS } from '../src/lib/clock.js';
import { activeKeys, alertsOf, hostSnapshot, outboxEvents, pushOk, type HostState } from './helpers/alerts.js';
import { api, describeEachStore } from './helpers/app.js';
import { reporter } from './helpers/ingest.js';

/**
 * The sequence: one server's snapshots through ingest with a fake
 * clock, and the exact alert history and notifications they produce.
 */
describeEachStore('alerts: a server\'s life, snapshot by snapshot', (t) => {
  test('raise, stack, ack, re-occur, mute, unmute, profile on and off, manual resolve, clear, TTL, reboots, silence and return', async () => {
    const r = await reporter(t, { name: 'seq-host' });
    const token = r.user.token;
    const expiry = eventAlertExpiryJob(t.store);
    const watchdog = unreachableWatchdogJob(t.store);
    let bootAt = t.clock.now().getTime() - 3_600_000;
    let state: Omit<HostState, 'uptime'> = {};
    const uptime = () => Math.round((t.clock.now().getTime() - bootAt) / 1000);
    /** Five minutes later (the agent's interval), a snapshot of the host in its current state. */
    const next = async (change: Omit<HostState, 'uptime'> = {}, gapMs = 5 * MINUTE_MS) => {
      t.clock.advance(gapMs);
      state = { ...state, ...change };
      return pushOk(t, r, hostSnapshot(t, { ...state, uptime: uptime() }));
    };
    const outbox = () => outboxEvents(t, r.server.id);
    const byType = async (type: string, status = 'active') => {
      const found = (await alertsOf(t, r, `&status=${status}`)).filter((a) => a.alert_type === type);
      assert.equal(found.length, 1, `one ${status} ${type}: ${JSON.stringify(found)}`);
      return found[0];
    };
    // Each action a second after the push before it, so its notifications are told apart from the push's.
    const action = async (path: string) => {
      t.clock.advance(1000);
      const res = await api(t, 'POST', `/api/v1${path}`, { token });
      assert.equal(res.status, 200, res.raw);
      return res.body.alert;
    };

    // A healthy host: nothing.
    assert.deepEqual(await next(), [0, 0]);
    assert.deepEqual(await outbox(), []);

    // The firewall goes off and the OOM killer strikes: a state and an event alert.
    assert.deepEqual(await next({ firewall: false, oomKills: 2 }), [2, 2]);
    assert.deepEqual(await activeKeys(t, r), ['no_firewall - warning', 'oom_kills - critical']);
    assert.deepEqual(await outbox(), ['alert.raised no_firewall', 'alert.raised oom_kills']);

    // Acknowledged: silenced, still active; a second acknowledgement keeps the first time.
    const oom = await byType('oom_kills');
    const acked = await action(`/alerts/${oom.id}/acknowledge`);
    assert.deepEqual([acked.acknowledged, acked.acknowledged_at, acked.status], [true, t.clock.now().toISOString(), 'active']);
    assert.equal((await action(`/alerts/${oom.id}/acknowledge`)).acknowledged_at, acked.acknowledged_at);

    // The OOM killer strikes again: the card stacks, the acknowledgement is cleared, and it notifies again.
    assert.deepEqual(await next({ oomKills: 1 }), [0, 2]);
    const stacked = await byType('oom_kills');
    assert.deepEqual([stacked.id, stacked.occurrences, stacked.acknowledged, stacked.acknowledged_at], [oom.id, 2, false, null]);
    assert.equal(stacked.last_seen_at, t.clock.now().toISOString());
    const lastOccurrence = t.clock.now().getTime();
    assert.equal((await outbox()).at(-1), 'alert.occurred oom_kills');

    // No new kill: the event card stays until its TTL.
    assert.deepEqual(await next({ oomKills: 0 }), [0, 2]);

    // Muting no_firewall resolves it at once; while muted it is not raised.
    const firewallAlert = await byType('no_firewall');
    t.clock.advance(1000);
    const muted = await api(t, 'POST', `/api/v1/servers/${r.server.id}/mutes`, { token, body: { alert_type: 'no_firewall' } });
    assert.deepEqual(muted.body, { server_id: r.server.id, muted_rules: ['no_firewall'] });
    const mutedAlert = await byType('no_firewall', 'resolved');
    assert.deepEqual([mutedAlert.id, mutedAlert.resolved_by], [firewallAlert.id, 'mute']);
    assert.deepEqual(await next(), [0, 1]);
    assert.deepEqual(await activeKeys(t, r), ['oom_kills - critical']);

    // Unmuted: the next snapshot raises it again, as a new alert.
    const unmuted = await api(t, 'DELETE', `/api/v1/servers/${r.server.id}/mutes`, { token, body: { alert_type: 'no_firewall' } });
    assert.deepEqual(unmuted.body, { server_id: r.server.id, muted_rules: [] });
    assert.deepEqual(await next(), [1, 2]);
    const again = await byType('no_firewall');
    assert.notEqual(again.id, firewallAlert.id);

    // The marketplace_gpu profile silences no_firewall (resolved at once) and unattended_upgrades_disabled.
    t.clock.advance(1000);
    const gpu = await api(t, 'PATCH', `/api/v1/servers/${r.server.id}`, { token, body: { profile: 'marketplace_gpu' } });
    assert.equal(gpu.status, 200, gpu.raw);
    assert.equal(gpu.body.active_alerts, 1);
    assert.equal((await alertsOf(t, r)).find((a) => a.id === again.id).resolved_by, 'mute');
    assert.deepEqual(await next({ autoUpdates: false }), [0, 1]);
    assert.deepEqual(await activeKeys(t, r), ['oom_kills - critical']);

    // Profile cleared: both are raised by the next snapshot.
    assert.equal((await api(t, 'PATCH', `/api/v1/servers/${r.server.id}`, { token, body: { profile: null } })).status, 200);
    assert.deepEqual(await activeKeys(t, r), ['oom_kills - critical']);
    assert.deepEqual(await next(), [2, 3]);
    assert.deepEqual(await activeKeys(t, r), ['no_firewall - warning', 'oom_kills - critical', 'unattended_upgrades_disabled - warning']);

    // Resolved by hand while the firewall is still off: resolved, and raised again by the next snapshot as a new alert.
    const stuck = await byType('no_firewall');
    const resolvedByHand = await action(`/alerts/${stuck.id}/resolve`);
    assert.deepEqual([resolvedByHand.status, resolvedByHand.resolved_by, resolvedByHand.resolved_at], ['resolved', 'manual', t.clock.now().toISOString()]);
    const eventsBefore = (await outbox()).length;
    assert.deepEqual(await action(`/alerts/${stuck.id}/resolve`), resolvedByHand, 'resolving again changes nothing');
    assert.equal((await outbox()).length, eventsBefore, 'and notifies nothing');
    assert.deepEqual(await next(), [1, 3]);
    assert.notEqual((await byType('no_firewall')).id, stuck.id);

    // The conditions clear: both state alerts resolve; the event card does not.
    assert.deepEqual(await next({ firewall: true, autoUpdates: true }), [0, 1]);
    assert.deepEqual(await activeKeys(t, r), ['oom_kills - critical']);

    // TTL: the event card resolves 24 h after its last occurrence, not a millisecond before.
    t.clock.set(new Date(lastOccurrence + DAY_MS - 1).toISOString());
    await expiry.run(t.clock.now());
    assert.deepEqual(await activeKeys(t, r), ['oom_kills - critical']);
    t.clock.advance(1);
    await expiry.run(t.clock.now());
    const expired = await byType('oom_kills', 'resolved');
    assert.deepEqual([expired.id, expired.resolved_by, expired.resolved_at], [oom.id, 'ttl', t.clock.now().toISOString()]);
    // (The clock jumped a day: the watchdog would have raised server_unreachable; it has not run, and the next push is proof of life.)

    // A planned reboot: the snapshot after it announces it.
    bootAt = t.clock.now().getTime() + 5 * MINUTE_MS - 40_000;
    assert.deepEqual(await next({ expectedReboot: true }), [0, 0]);
    // Five minutes on, the host reboots again without notice.
    bootAt = t.clock.now().getTime() + 5 * MINUTE_MS - 30_000;
    assert.deepEqual(await next({ expectedReboot: undefined }), [1, 1]);
    const reboot = await byType('unexpected_reboot');
    assert.equal(reboot.kind, 'event');

    // The host goes silent: 3 intervals (15 minutes) after its last snapshot the watchdog raises server_unreachable, once.
    const lastPush = t.clock.now().getTime();
    t.clock.set(new Date(lastPush + 15 * MINUTE_MS - 1).toISOString());
    await watchdog.run(t.clock.now());
    assert.deepEqual(await activeKeys(t, r), ['unexpected_reboot - warning']);
    t.clock.advance(1);
    await watchdog.run(t.clock.now());
    t.clock.advance(MINUTE_MS);
    await watchdog.run(t.clock.now());
    assert.deepEqual(await activeKeys(t, r), ['server_unreachable - critical', 'unexpected_reboot - warning']);
    const health = await api(t, 'GET', `/api/v1/servers/${r.server.id}/health`, { token });
    assert.deepEqual([health.body.status, health.body.current.active_alerts], ['offline', 2]);

    // It comes back: the first snapshot resolves server_unreachable.
    assert.deepEqual(await next({}, MINUTE_MS), [0, 1]);
    assert.equal((await byType('server_unreachable', 'resolved')).resolved_by, 'condition');
    const back = await api(t, 'GET', `/api/v1/servers/${r.server.id}/health`, { token });
    assert.deepEqual([back.body.status, back.body.current.active_alerts], ['warning', 1]);

    // The whole history, newest first (alerts raised by one snapshot share their time and are sorted here).
    const all = await alertsOf(t, r);
    for (let i = 1; i < all.length; i++) assert.ok(all[i - 1].first_seen_at >= all[i].first_seen_at, 'newest first');
    const line = (a: any) => `${a.alert_type} ${a.status} ${a.resolved_by ?? '-'} x${a.occurrences}`;
    assert.deepEqual(all.map((a) => [a.first_seen_at, line(a)]).sort((a, b) => b[0].localeCompare(a[0]) || a[1].localeCompare(b[1])).map((x) => x[1]), [
      'server_unreachable resolved condition x1',
      'unexpected_reboot active - x1',
      'no_firewall resolved condition x1',
      'no_firewall resolved manual x1',
      'unattended_upgrades_disabled resolved condition x1',
      'no_firewall resolved mute x1',
      'no_firewall resolved mute x1',
      'oom_kills resolved ttl x2',
    ]);
    // One notification per raise, occurrence and resolution, in commit order.
    assert.deepEqual(await outbox(), [
      'alert.raised no_firewall', 'alert.raised oom_kills',
      'alert.occurred oom_kills',
      'alert.resolved no_firewall', // mute
      'alert.raised no_firewall', // unmuted
      'alert.resolved no_firewall', // profile
      'alert.raised no_firewall', 'alert.raised unattended_upgrades_disabled', // profile cleared
      'alert.resolved no_firewall', // by hand
      'alert.raised no_firewall', // still off: a new alert
      'alert.resolved no_firewall', 'alert.resolved unattended_upgrades_disabled', // cleared
      'alert.resolved oom_kills', // ttl
      'alert.raised unexpected_reboot',
      'alert.raised server_unreachable',
      'alert.resolved server_unreachable',
    ]);
  });
});
