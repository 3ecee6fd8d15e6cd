import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MINUTE_MS } from '../src/lib/clock.js';
import { evaluateRules } from '../src/rules/catalog.js';
import { silencedTypes } from '../src/rules/profiles.js';
import { alertsOf, hostSnapshot, outboxEvents, pushOk } from './helpers/alerts.js';
import { describeEachStore, type TestApp } from './helpers/app.js';
import { FIXTURES, fixtureText, reporter, type FixtureName } from './helpers/ingest.js';

/** What the catalog's rules find in a fixture pushed now as a server's first snapshot, as sorted `type subject severity` lines. */
function expectedFor(t: TestApp, name: FixtureName, profile: string | null = null): string[] {
  const silenced = silencedTypes(profile);
  const { findings } = evaluateRules({
    snapshot: JSON.parse(fixtureText(name)), previous: null, thresholds: {}, now: t.clock.now(), minAgentVersion: t.config.minAgentVersion,
  });
  return findings.filter((f) => !silenced.has(f.alert_type)).map((f) => `${f.alert_type} ${f.subject ?? '-'} ${f.severity}`).sort();
}

describeEachStore('alerts: real snapshots through ingest', (t) => {
  for (const name of FIXTURES) {
    test(`${name}: ingest raises exactly what the rules find, and notifies each`, async () => {
      const r = await reporter(t);
      const expected = expectedFor(t, name);
      const [raised, active] = await pushOk(t, r, fixtureText(name));
      assert.deepEqual([raised, active], [expected.length, expected.length]);
      const stored = await alertsOf(t, r);
      assert.deepEqual(stored.map((a) => `${a.alert_type} ${a.subject ?? '-'} ${a.severity}`).sort(), expected);
      for (const alert of stored) {
        assert.equal(alert.status, 'active');
        assert.ok(alert.title && alert.message && alert.recommendation, JSON.stringify(alert));
      }
      assert.deepEqual(await outboxEvents(t, r.server.id), stored.map((a) => `alert.raised ${a.alert_type}`).sort());
    });
  }

  test('the Debian VM has no firewall and no automatic updates; a marketplace_gpu server does not hear of either', async () => {
    const general = expectedFor(t, 'snapshot-vm-debian12.json');
    assert.ok(general.includes('no_firewall - warning') && general.includes('unattended_upgrades_disabled - warning'), general.join('\n'));
    const r = await reporter(t, { profile: 'marketplace_gpu' });
    const expected = expectedFor(t, 'snapshot-vm-debian12.json', 'marketplace_gpu');
    assert.deepEqual(expected, general.filter((line) => !/^(no_firewall|unattended_upgrades_disabled) /.test(line)));
    assert.deepEqual(await pushOk(t, r, fixtureText('snapshot-vm-debian12.json')), [expected.length, expected.length]);
    assert.deepEqual((await alertsOf(t, r)).map((a) => `${a.alert_type} ${a.subject ?? '-'} ${a.severity}`).sort(), expected);
    assert.ok(!(await outboxEvents(t, r.server.id)).some((e) => /no_firewall|unattended_upgrades_disabled/.test(e)));
  });

  test('two full mounts are two alerts; the one that frees space resolves alone', async () => {
    const r = await reporter(t);
    const full = [{ mount: '/', percent_used: 91 }, { mount: '/var/lib/postgresql', percent_used: 97 }];
    assert.deepEqual(await pushOk(t, r, hostSnapshot(t, { uptime: 9000, disks: full })), [2, 2]);
    const [pg, root] = (await alertsOf(t, r)).sort((a, b) => b.subject.localeCompare(a.subject));
    assert.deepEqual([root.subject, root.severity, pg.subject, pg.severity], ['/', 'warning', '/var/lib/postgresql', 'critical']);
    t.clock.advance(5 * MINUTE_MS);
    assert.deepEqual(await pushOk(t, r, hostSnapshot(t, { uptime: 9300, disks: [full[0]!, { mount: '/var/lib/postgresql', percent_used: 60 }] })), [0, 1]);
    const after = new Map((await alertsOf(t, r)).map((a) => [a.id, a]));
    assert.deepEqual([after.get(pg.id).status, after.get(pg.id).resolved_by], ['resolved', 'condition']);
    assert.deepEqual([after.get(root.id).status, after.get(root.id).last_seen_at], ['active', t.clock.now().toISOString()]);
    // A snapshot without the disks block says nothing about them: the alert stays.
    t.clock.advance(5 * MINUTE_MS);
    const { disks: _, ...withoutDisks } = hostSnapshot(t, { uptime: 9600 });
    assert.deepEqual(await pushOk(t, r, withoutDisks), [0, 1]);
  });
});
