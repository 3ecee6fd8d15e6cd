import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ruleByType } from '../../src/rules/catalog.js';
import { compareSemver, parseSemver } from '../../src/rules/lifecycle.js';
import type { RuleMemory } from '../../src/rules/types.js';
import { NOW, evaluate, input, table, type Case, type Expected } from './support.js';

/** The previous snapshot, `secondsAgo` before NOW, with `uptime` seconds of uptime. */
const previous = (secondsAgo: number, uptime: number | null): RuleMemory =>
  ({ received_at: new Date(NOW.getTime() - secondsAgo * 1000).toISOString(), uptime_seconds: uptime, ecc_correctable: [], sel_seen: [] });

describe('unexpected_reboot (event): uptime < 600 s and < ½ × (previous uptime + time since), without expected_reboot', () => {
  const week = previous(300, 604_800);
  /** A snapshot with `uptime`, after `prev`. */
  const after = (label: string, prev: RuleMemory | null, uptime: number | null, expected: Expected, extra: Record<string, unknown> = {}): Case =>
    [label, extra, expected, { previous: prev, uptime }];
  table('unexpected_reboot', [
    after('rebooted: uptime 90 s, a week of uptime 300 s earlier', week, 90, 'warning'),
    after('uptime 599 s', week, 599, 'warning'),
    after('uptime 600 s', week, 600, 'clear'),
    after('kept running: 300 s later, uptime grew by 300', previous(300, 100), 400, 'clear'),
    after('249 s is below ½ × (200 + 300)', previous(300, 200), 249, 'warning'),
    after('250 s is not', previous(300, 200), 250, 'clear'),
    after('expected_reboot true', week, 90, 'clear', { expected_reboot: true }),
    after('expected_reboot an object', week, 90, 'clear', { expected_reboot: { reason: 'kernel update' } }),
    after('expected_reboot false', week, 90, 'warning', { expected_reboot: false }),
    after('expected_reboot null', week, 90, 'warning', { expected_reboot: null }),
    after('first snapshot of a server', null, 90, 'skip'),
    after('uptime missing', week, null, 'skip'),
    after('previous uptime missing', previous(300, null), 90, 'skip'),
    after('previous time unreadable', { ...week, received_at: 'yesterday' }, 90, 'skip'),
    ['no numeric level: an override is ignored', {}, 'warning', { previous: week, uptime: 90, thresholds: { unexpected_reboot: { warning: 10 } } }],
  ]);

  it('tells what happened and where to look', () => {
    const [f] = evaluate('unexpected_reboot', input({}, { previous: week, uptime: 90 }))!;
    assert.equal(f!.message, 'The host booted 90 s ago; the previous snapshot, 300 s earlier, showed 604800 s of uptime.');
    assert.match(f!.recommendation, /journalctl -b -1 -e/);
  });
});

describe('server_unreachable', () => {
  it('is in the catalog but raised by the watchdog, not by snapshots', () => {
    const rule = ruleByType('server_unreachable')!;
    assert.equal(rule.kind, 'state');
    assert.equal(rule.evaluate, undefined);
    assert.ok(rule.guidance);
  });
});

describe('agent_outdated: info when collector_version is below MIN_AGENT_VERSION (semver)', () => {
  const agent = (label: string, version: unknown, expected: Expected, minimum = '0.5.0'): Case =>
    [label, version === undefined ? {} : { collector_version: version }, expected, { minAgentVersion: minimum }];
  table('agent_outdated', [
    agent('0.4.9 < 0.5.0', '0.4.9', 'info'),
    agent('0.5.0 = 0.5.0', '0.5.0', 'clear'),
    agent('0.10.1 > 0.5.0 (numbers, not text)', '0.10.1', 'clear'),
    agent('0.5.0-rc.1 < 0.5.0', '0.5.0-rc.1', 'info'),
    agent('v0.6.0 with a v', 'v0.6.0', 'clear'),
    agent('0.5.0+build.7 = 0.5.0', '0.5.0+build.7', 'clear'),
    agent('junk version', 'latest', 'skip'),
    agent('partial version 0.5', '0.5', 'skip'),
    agent('version null', null, 'skip'),
    agent('version absent', undefined, 'skip'),
    agent('a junk minimum', '0.1.0', 'skip', 'soon'),
  ]);

  it('names both versions', () => {
    const [f] = evaluate('agent_outdated', input({ collector_version: '0.4.0' }, { minAgentVersion: '0.5.0' }))!;
    assert.equal(f!.title, 'Agent 0.4.0 is outdated');
    assert.deepEqual(f!.evidence, { collector_version: '0.4.0', min_supported: '0.5.0' });
  });

  it('orders versions as semantic versioning does', () => {
    const ordered = ['0.9.0', '1.0.0-alpha', '1.0.0-alpha.1', '1.0.0-alpha.beta', '1.0.0-beta', '1.0.0-beta.2', '1.0.0-beta.11', '1.0.0-rc.1', '1.0.0', '1.2.0', '1.10.0'];
    for (let i = 1; i < ordered.length; i++) {
      const a = parseSemver(ordered[i - 1])!;
      const b = parseSemver(ordered[i])!;
      assert.ok(compareSemver(a, b) < 0, `${ordered[i - 1]} < ${ordered[i]}`);
      assert.ok(compareSemver(b, a) > 0, `${ordered[i]} > ${ordered[i - 1]}`);
    }
    assert.equal(compareSemver(parseSemver('1.2.3')!, parseSemver('v1.2.3+x')!), 0);
    for (const junk of ['', '1', '1.2', '01.2.3', '1.2.3.4', 'x.y.z', 42, null, '1.2.3-']) assert.equal(parseSemver(junk), null, String(junk));
  });
});
