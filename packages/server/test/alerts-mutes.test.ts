import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MINUTE_MS } from '../src/lib/clock.js';
import { activeKeys, alertsOf, hostSnapshot, outboxEvents, pushOk } from './helpers/alerts.js';
import { api, createKey, describeEachStore, expectEnvelope, registerUser } from './helpers/app.js';
import { reporter } from './helpers/ingest.js';
import { trashServer } from './helpers/servers.js';

describeEachStore('GET/POST/DELETE /servers/:id/mutes', (t) => {
  const url = (id: string) => `/api/v1/servers/${id}/mutes`;

  test('one rule per request; the list is alphabetical; muting twice or unmuting an unmuted rule changes nothing', async () => {
    const r = await reporter(t);
    const token = r.user.token;
    assert.deepEqual((await api(t, 'GET', url(r.server.id), { token })).body, { server_id: r.server.id, muted_rules: [] });
    for (const type of ['no_firewall', 'cpu_high', 'no_firewall']) {
      const res = await api(t, 'POST', url(r.server.id), { token, body: { alert_type: type, extra: 'dropped' } });
      assert.equal(res.status, 200, res.raw);
    }
    assert.deepEqual((await api(t, 'GET', url(r.server.id), { token })).body.muted_rules, ['cpu_high', 'no_firewall']);
    const removed = await api(t, 'DELETE', url(r.server.id), { token, body: { alert_type: 'cpu_high' } });
    assert.deepEqual(removed.body, { server_id: r.server.id, muted_rules: ['no_firewall'] });
    const again = await api(t, 'DELETE', url(r.server.id), { token, body: { alert_type: 'cpu_high' } });
    assert.deepEqual([again.status, again.body.muted_rules], [200, ['no_firewall']]);
  });

  test('muting resolves the active alerts of that type at once, every subject, and notifies; other types stay', async () => {
    const r = await reporter(t);
    const disks = [{ mount: '/', percent_used: 90 }, { mount: '/data', percent_used: 96 }];
    assert.deepEqual(await pushOk(t, r, hostSnapshot(t, { uptime: 5000, disks, firewall: false })), [3, 3]);
    t.clock.advance(1000);
    const res = await api(t, 'POST', url(r.server.id), { token: r.user.token, body: { alert_type: 'disk_space_high' } });
    assert.equal(res.status, 200, res.raw);
    assert.deepEqual(await activeKeys(t, r), ['no_firewall - warning']);
    const resolved = (await alertsOf(t, r, '&status=resolved')).map((a) => [a.subject, a.resolved_by, a.resolved_at]).sort();
    assert.deepEqual(resolved, [['/', 'mute', t.clock.now().toISOString()], ['/data', 'mute', t.clock.now().toISOString()]]);
    assert.deepEqual((await outboxEvents(t, r.server.id)).slice(3), ['alert.resolved disk_space_high', 'alert.resolved disk_space_high']);
    // Muted: the full disks raise nothing; unmuted: the next snapshot raises them again.
    t.clock.advance(MINUTE_MS);
    assert.deepEqual(await pushOk(t, r, hostSnapshot(t, { uptime: 5060, disks, firewall: false })), [0, 1]);
    await api(t, 'DELETE', url(r.server.id), { token: r.user.token, body: { alert_type: 'disk_space_high' } });
    assert.deepEqual(await activeKeys(t, r), ['no_firewall - warning']);
    t.clock.advance(MINUTE_MS);
    assert.deepEqual(await pushOk(t, r, hostSnapshot(t, { uptime: 5120, disks, firewall: false })), [2, 3]);
  });

  test('an unknown alert type or a missing body is 400 and changes nothing; checked before the server is looked up', async () => {
    const r = await reporter(t);
    const token = r.user.token;
    for (const method of ['POST', 'DELETE'] as const) {
      for (const body of [{ alert_type: 'disk_full' }, { alert_type: '' }, { alert_type: 'x'.repeat(101) }, { alert_type: 7 }, {}, { type: 'cpu_high' }]) {
        const res = await api(t, method, url(r.server.id), { token, body });
        const envelope = expectEnvelope(res, 400, 'validation_failed');
        assert.ok(envelope.details.some((d: any) => d.field === '/alert_type'), `${method} ${JSON.stringify(body)}: ${res.raw}`);
      }
      expectEnvelope(await api(t, method, url(r.server.id), { token }), 400, 'validation_failed');
      expectEnvelope(await api(t, method, url('srv_unknown0000000000000'), { token, body: { alert_type: 'disk_full' } }), 400, 'validation_failed');
    }
    const unknown = expectEnvelope(await api(t, 'POST', url(r.server.id), { token, body: { alert_type: 'disk_full' } }), 400, 'validation_failed');
    assert.match(unknown.message, /alert-rules/);
    assert.deepEqual((await api(t, 'GET', url(r.server.id), { token })).body.muted_rules, []);
  });

  test('401, 403 for a read key on changes (reads are fine), 404 for other accounts and trashed servers', async () => {
    const r = await reporter(t);
    const read = await createKey(t, r.user.token, ['read']);
    const other = await registerUser(t);
    const body = { alert_type: 'cpu_high' };
    expectEnvelope(await api(t, 'GET', url(r.server.id)), 401, 'unauthorized');
    assert.equal((await api(t, 'GET', url(r.server.id), { token: read.secret })).status, 200);
    for (const method of ['POST', 'DELETE'] as const) {
      expectEnvelope(await api(t, method, url(r.server.id), { body }), 401, 'unauthorized');
      expectEnvelope(await api(t, method, url(r.server.id), { token: read.secret, body }), 403, 'insufficient_scope');
    }
    for (const method of ['GET', 'POST', 'DELETE'] as const) {
      const foreign = expectEnvelope(await api(t, method, url(r.server.id), { token: other.token, body: method === 'GET' ? undefined : body }), 404, 'not_found');
      const missing = expectEnvelope(await api(t, method, url('srv_doesNotExist0000000000'), { token: other.token, body: method === 'GET' ? undefined : body }), 404, 'not_found');
      assert.equal(foreign.message, missing.message);
    }
    assert.deepEqual((await api(t, 'GET', url(r.server.id), { token: r.user.token })).body.muted_rules, []);
    await trashServer(t, r.user.token, r.server.id);
    expectEnvelope(await api(t, 'POST', url(r.server.id), { token: r.user.token, body }), 404, 'not_found');
    expectEnvelope(await api(t, 'GET', url(r.server.id), { token: r.user.token }), 404, 'not_found');
  });
});
