import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MINUTE_MS } from '../src/lib/clock.js';
import { alertsOf, hostSnapshot, outboxEvents, pushOk } from './helpers/alerts.js';
import { api, createKey, describeEachStore, expectEnvelope, registerUser, type TestApp } from './helpers/app.js';
import { reporter, type Reporter } from './helpers/ingest.js';
import { purger, trashServer } from './helpers/servers.js';

/** A server with alerts raised at three moments: / full (critical), then the firewall off, then /data filling up. */
async function withAlerts(t: TestApp): Promise<Reporter & { times: string[] }> {
  const r = await reporter(t);
  const times: string[] = [];
  const at = async (state: Parameters<typeof hostSnapshot>[1]) => {
    t.clock.advance(5 * MINUTE_MS);
    times.push(t.clock.now().toISOString());
    await pushOk(t, r, hostSnapshot(t, state));
  };
  await at({ uptime: 10_000, disks: [{ mount: '/', percent_used: 97 }] });
  await at({ uptime: 10_300, disks: [{ mount: '/', percent_used: 97 }], firewall: false });
  await at({ uptime: 10_600, disks: [{ mount: '/', percent_used: 50 }, { mount: '/data', percent_used: 90 }], firewall: false });
  return { ...r, times };
}

const listUrl = (r: Reporter, query = '') => `/api/v1/servers/${r.server.id}/alerts${query}`;

describeEachStore('GET /servers/:id/alerts', (t) => {
  test('newest first with page, per_page and total; status all by default', async () => {
    const r = await withAlerts(t);
    const res = await api(t, 'GET', listUrl(r), { token: r.user.token });
    assert.equal(res.status, 200, res.raw);
    assert.deepEqual(Object.keys(res.body).sort(), ['alerts', 'page', 'per_page', 'total']);
    assert.deepEqual([res.body.page, res.body.per_page, res.body.total], [1, 50, 3]);
    assert.deepEqual(res.body.alerts.map((a: any) => `${a.alert_type} ${a.subject} ${a.status}`), [
      'disk_space_high /data active', 'no_firewall null active', 'disk_space_high / resolved',
    ]);
    const alert = res.body.alerts[2];
    assert.deepEqual(Object.keys(alert).sort(), [
      'acknowledged', 'acknowledged_at', 'alert_type', 'evidence', 'first_seen_at', 'id', 'kind', 'last_seen_at', 'message', 'occurrences',
      'recommendation', 'resolved_at', 'resolved_by', 'server_id', 'severity', 'status', 'subject', 'title',
    ]);
    assert.match(alert.id, /^alt_/);
    assert.deepEqual([alert.server_id, alert.severity, alert.kind, alert.resolved_by, alert.first_seen_at, alert.resolved_at],
      [r.server.id, 'critical', 'state', 'condition', r.times[0], r.times[2]]);
    assert.equal(alert.last_seen_at, r.times[1], 'a state alert is seen by every snapshot that still shows it');
    assert.equal(alert.evidence.percent_used, 97);

    const page2 = await api(t, 'GET', listUrl(r, '?per_page=2&page=2'), { token: r.user.token });
    assert.deepEqual([page2.body.page, page2.body.per_page, page2.body.total, page2.body.alerts.length], [2, 2, 3, 1]);
    assert.equal(page2.body.alerts[0].subject, '/');
    const beyond = await api(t, 'GET', listUrl(r, '?page=9'), { token: r.user.token });
    assert.deepEqual([beyond.status, beyond.body.alerts, beyond.body.total], [200, [], 3]);
  });

  test('filters: status, severity, and the time window an alert was active in', async () => {
    const r = await withAlerts(t);
    const types = async (query: string) => (await alertsOf(t, r, query)).map((a) => `${a.alert_type} ${a.subject ?? '-'}`);
    assert.deepEqual(await types('&status=active'), ['disk_space_high /data', 'no_firewall -']);
    assert.deepEqual(await types('&status=resolved'), ['disk_space_high /']);
    assert.deepEqual(await types('&status=all&severity=critical'), ['disk_space_high /']);
    assert.deepEqual(await types('&severity=info'), []);
    // Active at some moment in [from, to): raised before `to`, not resolved before `from`.
    assert.deepEqual(await types(`&to=${r.times[1]}`), ['disk_space_high /']);
    assert.deepEqual(await types(`&from=${r.times[2]}`), ['disk_space_high /data', 'no_firewall -', 'disk_space_high /']);
    assert.deepEqual(await types(`&from=${encodeURIComponent(new Date(Date.parse(r.times[2]!) + 1).toISOString())}`), ['disk_space_high /data', 'no_firewall -']);
    assert.deepEqual(await types(`&from=${r.times[0]}&to=${r.times[1]}&status=resolved`), ['disk_space_high /']);
    const res = await api(t, 'GET', listUrl(r, '?status=active&per_page=1'), { token: r.user.token });
    assert.deepEqual([res.body.total, res.body.alerts.length], [2, 1]);
  });

  test('bad parameters are 400 validation_failed, checked before the server is looked up', async () => {
    const r = await withAlerts(t);
    for (const query of ['?status=open', '?severity=high', '?page=0', '?per_page=101', '?per_page=0', '?page=x', '?from=yesterday', '?to=2026-02-30', '?from=2026-11-22T10:00:00',
      `?from=${r.times[1]}&to=${r.times[0]}`, `?from=${r.times[0]}&to=${r.times[0]}`]) {
      const res = await api(t, 'GET', listUrl(r, query), { token: r.user.token });
      const body = expectEnvelope(res, 400, 'validation_failed');
      assert.ok(body.details.length > 0, query);
      expectEnvelope(await api(t, 'GET', `/api/v1/servers/srv_unknown000000000000/alerts${query}`, { token: r.user.token }), 400, 'validation_failed');
    }
    assert.equal((await api(t, 'GET', listUrl(r, '?from=2026-11-22&to=2026-11-23T00:00:00%2B01:00'), { token: r.user.token })).status, 200);
  });

  test('401 without a credential; a read key suffices; other accounts, trashed and unknown servers are 404 alike', async () => {
    const r = await withAlerts(t);
    expectEnvelope(await api(t, 'GET', listUrl(r)), 401, 'unauthorized');
    const read = await createKey(t, r.user.token, ['read']);
    assert.equal((await api(t, 'GET', listUrl(r), { token: read.secret })).status, 200);
    const other = await registerUser(t);
    const foreign = expectEnvelope(await api(t, 'GET', listUrl(r), { token: other.token }), 404, 'not_found');
    const missing = expectEnvelope(await api(t, 'GET', '/api/v1/servers/srv_doesNotExist0000000000/alerts', { token: other.token }), 404, 'not_found');
    assert.equal(foreign.message, missing.message);
    await trashServer(t, r.user.token, r.server.id);
    expectEnvelope(await api(t, 'GET', listUrl(r), { token: r.user.token }), 404, 'not_found');
  });
});

describeEachStore('POST /alerts/:id/acknowledge and /resolve', (t) => {
  test('acknowledge answers the alert; acknowledging a resolved alert changes nothing', async () => {
    const r = await withAlerts(t);
    const [data, , root] = await alertsOf(t, r);
    const res = await api(t, 'POST', `/api/v1/alerts/${data.id}/acknowledge`, { token: r.user.token });
    assert.equal(res.status, 200, res.raw);
    assert.deepEqual(res.body, { success: true, alert: { ...data, acknowledged: true, acknowledged_at: t.clock.now().toISOString() } });
    const onResolved = await api(t, 'POST', `/api/v1/alerts/${root.id}/acknowledge`, { token: r.user.token });
    assert.deepEqual([onResolved.status, onResolved.body.alert], [200, root]);
  });

  test('resolve answers the resolved alert and notifies once; again is a no-op 200', async () => {
    const r = await withAlerts(t);
    const [data] = await alertsOf(t, r);
    const before = await outboxEvents(t, r.server.id);
    t.clock.advance(1000);
    const res = await api(t, 'POST', `/api/v1/alerts/${data.id}/resolve`, { token: r.user.token });
    assert.equal(res.status, 200, res.raw);
    const resolved = { ...data, status: 'resolved', resolved_by: 'manual', resolved_at: t.clock.now().toISOString() };
    assert.deepEqual(res.body, { success: true, alert: resolved });
    assert.deepEqual(await outboxEvents(t, r.server.id), [...before, 'alert.resolved disk_space_high']);
    t.clock.advance(1000);
    const again = await api(t, 'POST', `/api/v1/alerts/${data.id}/resolve`, { token: r.user.token });
    assert.deepEqual([again.status, again.body], [200, { success: true, alert: resolved }]);
    assert.equal((await outboxEvents(t, r.server.id)).length, before.length + 1);
    // Acknowledging is not possible any more, and is not an error either.
    assert.equal((await api(t, 'POST', `/api/v1/alerts/${data.id}/acknowledge`, { token: r.user.token })).body.alert.acknowledged, false);
  });

  test('401, 403 for a read key, 404 for another account\'s, a trashed server\'s or an unknown alert; nothing changes', async () => {
    const r = await withAlerts(t);
    const [data] = await alertsOf(t, r);
    const read = await createKey(t, r.user.token, ['read']);
    const other = await registerUser(t);
    for (const action of ['acknowledge', 'resolve']) {
      const url = `/api/v1/alerts/${data.id}/${action}`;
      expectEnvelope(await api(t, 'POST', url), 401, 'unauthorized');
      expectEnvelope(await api(t, 'POST', url, { token: read.secret }), 403, 'insufficient_scope');
      const foreign = expectEnvelope(await api(t, 'POST', url, { token: other.token }), 404, 'not_found');
      const missing = expectEnvelope(await api(t, 'POST', `/api/v1/alerts/alt_doesNotExist0000000000/${action}`, { token: other.token }), 404, 'not_found');
      assert.equal(foreign.message, missing.message);
    }
    assert.deepEqual((await alertsOf(t, r))[0], data);
    await trashServer(t, r.user.token, r.server.id);
    expectEnvelope(await api(t, 'POST', `/api/v1/alerts/${data.id}/resolve`, { token: r.user.token }), 404, 'not_found');
    const row = await t.store.db.selectFrom('alerts').select('status').where('id', '=', data.id).executeTakeFirstOrThrow();
    assert.equal(row.status, 'active');
  });
});

describeEachStore('server list, get and health count active alerts', (t) => {
  test('active_alerts on GET /servers (one page), GET /servers/:id and the health; status from the worst severity', async () => {
    const r = await withAlerts(t);
    const quiet = await reporter(t, {}, r.user);
    const list = await api(t, 'GET', '/api/v1/servers', { token: r.user.token });
    assert.deepEqual(list.body.servers.map((s: any) => [s.id, s.active_alerts]), [[r.server.id, 2], [quiet.server.id, 0]]);
    assert.equal((await api(t, 'GET', `/api/v1/servers/${r.server.id}`, { token: r.user.token })).body.active_alerts, 2);
    const health = await api(t, 'GET', `/api/v1/servers/${r.server.id}/health`, { token: r.user.token });
    assert.deepEqual([health.body.status, health.body.current.active_alerts], ['warning', 2]);
    t.clock.advance(MINUTE_MS);
    await pushOk(t, r, hostSnapshot(t, { uptime: 10_700, disks: [{ mount: '/', percent_used: 99 }], firewall: false }));
    const critical = await api(t, 'GET', `/api/v1/servers/${r.server.id}/health`, { token: r.user.token });
    assert.deepEqual([critical.body.status, critical.body.current.active_alerts], ['critical', 2]);
    await trashServer(t, r.user.token, r.server.id);
    const trashed = await api(t, 'GET', '/api/v1/trashed-servers', { token: r.user.token });
    assert.equal(trashed.body.servers[0].active_alerts, 2);
  });
});

describeEachStore('purge destroys a server\'s alerts, mutes and notifications', (t) => {
  test('nothing of the server is left in alerts, server_mutes or notification_outbox', async () => {
    const keep = await withAlerts(t);
    // The purge key's password check lasts 5 minutes of the clock withAlerts moved.
    const { owner, key } = await purger(t);
    const r = await reporter(t, {}, owner);
    await pushOk(t, r, hostSnapshot(t, { uptime: 5000, firewall: false, oomKills: 1 }));
    await api(t, 'POST', `/api/v1/servers/${r.server.id}/mutes`, { token: owner.token, body: { alert_type: 'cpu_high' } });
    const counts = async (serverId: string) => Promise.all((['alerts', 'server_mutes', 'notification_outbox'] as const).map(async (table) =>
      (await t.store.db.selectFrom(table).select('server_id').where('server_id', '=', serverId).execute()).length));
    assert.deepEqual(await counts(r.server.id), [2, 1, 2]);
    await trashServer(t, owner.token, r.server.id);
    assert.equal((await api(t, 'DELETE', `/api/v1/trashed-servers/${r.server.id}?confirm=true`, { token: key })).status, 200);
    assert.deepEqual(await counts(r.server.id), [0, 0, 0]);
    assert.deepEqual(await counts(keep.server.id), [3, 0, 4]);
  });
});
