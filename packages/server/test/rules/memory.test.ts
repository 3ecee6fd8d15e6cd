import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_ECC_ENTRIES, MAX_SEL_SEEN, rememberSnapshot } from '../../src/rules/memory.js';
import type { RuleMemory } from '../../src/rules/types.js';
import { NOW, evaluate, input } from './support.js';

const HOUR = 3_600_000;
const ago = (hours: number) => new Date(NOW.getTime() - hours * HOUR).toISOString();
const memory = (extra: Partial<RuleMemory> = {}): RuleMemory => ({ received_at: ago(0.1), uptime_seconds: 1000, ecc_correctable: [], sel_seen: [], ...extra });
const ecc = (correctable: number | null) => ({ ipmi: { available: true, ecc_errors: { correctable, uncorrectable: 0 } } });
const critical = (id: string) => ({ id, timestamp: ago(1), sensor: 'PSU', event: 'AC lost', severity: 'critical', asserted: true });

describe('rememberSnapshot', () => {
  it('keeps the receive time and uptime of this snapshot', () => {
    const m = rememberSnapshot(input({}, { uptime: 4242 }));
    assert.deepEqual(m, { received_at: NOW.toISOString(), uptime_seconds: 4242, ecc_correctable: [], sel_seen: [] });
    assert.equal(rememberSnapshot(input({}, { uptime: null })).uptime_seconds, null);
  });

  it('ECC: records a count when it changes, not on every snapshot', () => {
    const first = rememberSnapshot(input(ecc(3)));
    assert.deepEqual(first.ecc_correctable, [[NOW.toISOString(), 3]]);
    const same = rememberSnapshot(input(ecc(3), { previous: first, now: new Date(NOW.getTime() + HOUR) }));
    assert.deepEqual(same.ecc_correctable, first.ecc_correctable);
    const later = new Date(NOW.getTime() + 2 * HOUR);
    const changed = rememberSnapshot(input(ecc(5), { previous: same, now: later }));
    assert.deepEqual(changed.ecc_correctable, [[NOW.toISOString(), 3], [later.toISOString(), 5]]);
  });

  it('ECC: forgets what is older than 24 h but keeps the last older entry as the baseline', () => {
    const previous = memory({ ecc_correctable: [[ago(48), 1], [ago(30), 2], [ago(26), 4], [ago(5), 6]] });
    assert.deepEqual(rememberSnapshot(input(ecc(6), { previous })).ecc_correctable, [[ago(26), 4], [ago(5), 6]]);
    const allOld = memory({ ecc_correctable: [[ago(48), 1], [ago(30), 2]] });
    assert.deepEqual(rememberSnapshot(input(ecc(2), { previous: allOld })).ecc_correctable, [[ago(30), 2]]);
  });

  it('ECC: the baseline makes a rise measured across the window edge correct, as the rule sees it', () => {
    // 4 at 26 h ago; +10 within the window.
    const previous = rememberSnapshot(input(ecc(4), { previous: memory({ ecc_correctable: [[ago(30), 0]] }), now: new Date(NOW.getTime() - 26 * HOUR) }));
    assert.equal(evaluate('ecc_errors', input(ecc(13), { previous }))!.length, 0);
    assert.equal(evaluate('ecc_errors', input(ecc(14), { previous }))![0]!.severity, 'warning');
  });

  it('ECC: without a reading (IPMI unreadable) the history carries over', () => {
    const previous = memory({ ecc_correctable: [[ago(2), 7]] });
    assert.deepEqual(rememberSnapshot(input({ ipmi: { available: false } }, { previous })).ecc_correctable, [[ago(2), 7]]);
    assert.deepEqual(rememberSnapshot(input({}, { previous })).ecc_correctable, [[ago(2), 7]]);
  });

  it(`ECC: at most ${MAX_ECC_ENTRIES} entries, the newest`, () => {
    const history = Array.from({ length: 1000 }, (_, i) => [new Date(NOW.getTime() - (1000 - i) * 60_000).toISOString(), i] as [string, number]);
    const m = rememberSnapshot(input(ecc(5000), { previous: memory({ ecc_correctable: history }) }));
    assert.equal(m.ecc_correctable.length, MAX_ECC_ENTRIES);
    assert.deepEqual(m.ecc_correctable.at(-1), [NOW.toISOString(), 5000]);
  });

  it('SEL: remembers the critical asserted events, so they raise once', () => {
    const snapshot = { ipmi: { available: true, sel_events_recent: [critical('01'), { ...critical('02'), severity: 'warning' }, { ...critical('03'), asserted: false }] } };
    const first = rememberSnapshot(input(snapshot, { previous: memory() }));
    assert.equal(first.sel_seen.length, 1);
    assert.match(first.sel_seen[0]!, /^[0-9a-f]{16}$/);
    assert.equal(evaluate('ipmi_sel_critical', input(snapshot, { previous: memory() }))!.length, 1);
    assert.deepEqual(evaluate('ipmi_sel_critical', input(snapshot, { previous: first })), []);
  });

  it(`SEL: keeps at most ${MAX_SEL_SEEN} keys, never dropping those the agent still reports`, () => {
    const old = Array.from({ length: 700 }, (_, i) => `k${i}`);
    const present = critical('aa');
    const key = rememberSnapshot(input({ ipmi: { available: true, sel_events_recent: [present] } })).sel_seen[0]!;
    const m = rememberSnapshot(input({ ipmi: { available: true, sel_events_recent: [present] } }, { previous: memory({ sel_seen: [key, ...old] }) }));
    assert.equal(m.sel_seen.length, MAX_SEL_SEEN);
    assert.equal(m.sel_seen.at(-1), key, 'the reported event moved to the newest end');
    assert.equal(m.sel_seen.at(-2), 'k699');
  });

  it('SEL: an unreadable BMC keeps what was seen', () => {
    assert.deepEqual(rememberSnapshot(input({ ipmi: null }, { previous: memory({ sel_seen: ['a', 'b'] }) })).sel_seen, ['a', 'b']);
  });

  it('memory that went bad in storage yields a clean memory', () => {
    const junk = { received_at: 7, uptime_seconds: 'x', ecc_correctable: 'x', sel_seen: [1, null, 'ok', {}] } as unknown as RuleMemory;
    assert.deepEqual(rememberSnapshot(input(ecc(2), { previous: junk })), {
      received_at: NOW.toISOString(), uptime_seconds: 86_400, ecc_correctable: [[NOW.toISOString(), 2]], sel_seen: ['ok'],
    });
  });

  it('is plain JSON', () => {
    const m = rememberSnapshot(input({ ...ecc(3), ipmi: { available: true, ecc_errors: { correctable: 3 }, sel_events_recent: [critical('01')] } }));
    assert.deepEqual(JSON.parse(JSON.stringify(m)), m);
  });
});
