import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { reconcile, type ReconcileInput } from '../src/features/alerts/reconcile.js';
import type { AlertRow } from '../src/features/alerts/records.js';
import type { AlertKind, Finding, Severity } from '../src/rules/types.js';

const EARLIER = '2026-11-22T11:00:00.000Z';
const NOW = '2026-11-22T12:00:00.000Z';
const KINDS: Record<string, AlertKind> = {
  disk_space_high: 'state', no_firewall: 'state', oom_kills: 'event', unexpected_reboot: 'event', server_unreachable: 'state', cpu_high: 'state',
};

function finding(alert_type: string, subject: string | null = null, severity: Severity = 'warning', evidence: Record<string, unknown> = { v: 1 }): Finding {
  return { alert_type, subject, severity, title: `${alert_type} title`, message: `${alert_type} message`, evidence, recommendation: 'do something' };
}

let seq = 0;
function active(alert_type: string, subject: string | null = null, over: Partial<AlertRow> = {}): AlertRow {
  const f = finding(alert_type, subject);
  return {
    id: `alt_${++seq}`, account_id: 'acc', server_id: 'srv', alert_type, subject, subject_key: subject ?? '',
    kind: KINDS[alert_type]!, severity: f.severity, status: 'active', title: f.title, message: f.message,
    evidence: JSON.stringify(f.evidence), recommendation: f.recommendation, occurrences: 1,
    first_seen_at: EARLIER, last_seen_at: EARLIER, resolved_at: null, resolved_by: null, acknowledged: 0, acknowledged_at: null,
    ...over,
  };
}

function run(partial: Partial<ReconcileInput> & { findings?: Finding[]; evaluated?: string[] }) {
  const findings = partial.findings ?? [];
  return reconcile({
    active: partial.active ?? [],
    evaluation: { findings, evaluated: new Set([...(partial.evaluated ?? []), ...findings.map((f) => f.alert_type)]) },
    muted: partial.muted ?? new Set(),
    silenced: partial.silenced ?? new Set(),
    kindOf: (type) => KINDS[type],
    now: NOW,
  });
}

/** A decision list as [action, alert_type, subject] triples, easy to compare. */
function summary(d: ReturnType<typeof run>): string[] {
  return [
    ...d.raise.map((a) => `raise ${a.alert_type} ${a.subject}`),
    ...d.stack.map((a) => `stack ${a.alert_type} ${a.subject}`),
    ...d.update.map(({ alert, changed }) => `update${changed ? '' : ' (same)'} ${alert.alert_type} ${alert.subject}`),
    ...d.resolve.map((a) => `resolve:${a.resolved_by} ${a.alert_type} ${a.subject}`),
  ].sort();
}

describe('reconcile: what one snapshot does to the alerts of a server', () => {
  const cases: Array<{ name: string; input: Parameters<typeof run>[0]; expect: string[] }> = [
    { name: 'nothing active, nothing found', input: {}, expect: [] },
    { name: 'a finding without an active alert raises one', input: { findings: [finding('cpu_high')] }, expect: ['raise cpu_high null'] },
    {
      name: 'two mounts are two alerts',
      input: { findings: [finding('disk_space_high', '/'), finding('disk_space_high', '/data')] },
      expect: ['raise disk_space_high /', 'raise disk_space_high /data'],
    },
    {
      name: 'the same mount freed resolves alone',
      input: { active: [active('disk_space_high', '/'), active('disk_space_high', '/data')], findings: [finding('disk_space_high', '/data')] },
      expect: ['resolve:condition disk_space_high /', 'update (same) disk_space_high /data'],
    },
    {
      name: 'a state alert still holding is updated, not raised again',
      input: { active: [active('cpu_high')], findings: [finding('cpu_high', null, 'critical')] },
      expect: ['update cpu_high null'],
    },
    {
      name: 'an event alert with a new occurrence stacks',
      input: { active: [active('oom_kills')], findings: [finding('oom_kills')] },
      expect: ['stack oom_kills null'],
    },
    {
      name: 'an event alert without an occurrence waits for its expiry',
      input: { active: [active('oom_kills')], evaluated: ['oom_kills'] },
      expect: [],
    },
    {
      name: 'a state alert of a type that was not evaluated is left alone',
      input: { active: [active('disk_space_high', '/')], evaluated: ['cpu_high'] },
      expect: [],
    },
    {
      name: 'a state alert of an evaluated type without a finding resolves',
      input: { active: [active('no_firewall')], evaluated: ['no_firewall'] },
      expect: ['resolve:condition no_firewall null'],
    },
    {
      name: 'server_unreachable resolves on any snapshot, even one that evaluates nothing',
      input: { active: [active('server_unreachable')] },
      expect: ['resolve:condition server_unreachable null'],
    },
    {
      name: 'a muted type is neither raised nor kept',
      input: { active: [active('disk_space_high', '/')], findings: [finding('disk_space_high', '/'), finding('cpu_high')], muted: new Set(['disk_space_high', 'cpu_high']) },
      expect: ['resolve:mute disk_space_high /'],
    },
    {
      name: 'a type silenced by the profile is neither raised nor kept',
      input: { active: [active('no_firewall')], findings: [finding('no_firewall'), finding('cpu_high')], silenced: new Set(['no_firewall']) },
      expect: ['raise cpu_high null', 'resolve:mute no_firewall null'],
    },
    {
      name: 'two findings of one key: one alert, the most severe',
      input: { findings: [finding('cpu_high', null, 'warning'), finding('cpu_high', null, 'critical')] },
      expect: ['raise cpu_high null'],
    },
  ];
  for (const c of cases) {
    test(c.name, () => assert.deepEqual(summary(run(c.input)), c.expect));
  }

  test('a raised alert carries the finding, its kind and the snapshot time', () => {
    const [raised] = run({ findings: [finding('oom_kills', null, 'critical', { kills: 3 })] }).raise;
    assert.deepEqual(raised, {
      alert_type: 'oom_kills', subject: null, kind: 'event', severity: 'critical', title: 'oom_kills title', message: 'oom_kills message',
      evidence: '{"kills":3}', recommendation: 'do something', occurrences: 1, first_seen_at: NOW, last_seen_at: NOW,
    });
    assert.equal(run({ findings: [finding('cpu_high', null, 'critical'), finding('cpu_high', null, 'info')] }).raise[0]!.severity, 'critical');
  });

  test('stacking adds an occurrence, moves last_seen_at, clears the acknowledgement and takes the new texts', () => {
    const card = active('unexpected_reboot', null, { occurrences: 2, acknowledged: 1, acknowledged_at: EARLIER });
    const [stacked] = run({ active: [card], findings: [finding('unexpected_reboot', null, 'warning', { uptime: 12 })] }).stack;
    assert.equal(stacked!.id, card.id);
    assert.equal(stacked!.occurrences, 3);
    assert.equal(stacked!.first_seen_at, EARLIER);
    assert.equal(stacked!.last_seen_at, NOW);
    assert.equal(stacked!.acknowledged, 0);
    assert.equal(stacked!.acknowledged_at, null);
    assert.equal(stacked!.evidence, '{"uptime":12}');
  });

  test('an update keeps the acknowledgement and tells whether more than last_seen_at changed', () => {
    const acked = active('cpu_high', null, { acknowledged: 1, acknowledged_at: EARLIER });
    const [same] = run({ active: [acked], findings: [finding('cpu_high')] }).update;
    assert.equal(same!.changed, false);
    assert.equal(same!.alert.last_seen_at, NOW);
    assert.equal(same!.alert.acknowledged, 1);
    const [worse] = run({ active: [acked], findings: [finding('cpu_high', null, 'critical')] }).update;
    assert.equal(worse!.changed, true);
    assert.equal(worse!.alert.severity, 'critical');
    const [newEvidence] = run({ active: [acked], findings: [finding('cpu_high', null, 'warning', { v: 2 })] }).update;
    assert.equal(newEvidence!.changed, true);
  });

  test('a resolution records when and why', () => {
    const [resolved] = run({ active: [active('no_firewall')], evaluated: ['no_firewall'] }).resolve;
    assert.deepEqual([resolved!.status, resolved!.resolved_at, resolved!.resolved_by], ['resolved', NOW, 'condition']);
  });
});
