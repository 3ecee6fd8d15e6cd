import { num, obj } from './common.js';
import { DAY_MS, criticalSelEvents, eccHistory, ipmiOf, seenSel } from './ipmi-read.js';
import type { RuleInput, RuleMemory } from './types.js';

/** Bounds that keep a server's memory small whatever its snapshots say. */
export const MAX_ECC_ENTRIES = 300;
export const MAX_SEL_SEEN = 500;

/**
 * The memory to store after this snapshot, for the next one's rules. Pure.
 * What this snapshot does not report (IPMI unreadable, say) is carried over
 * from the previous memory, so a gap in the data does not reset a baseline.
 */
export function rememberSnapshot(input: RuleInput): RuleMemory {
  const now = input.now.getTime();
  const ipmi = ipmiOf(input);
  return {
    received_at: input.now.toISOString(),
    uptime_seconds: num(obj(input.snapshot.system)?.uptime_seconds),
    ecc_correctable: rememberEcc(input, num(obj(ipmi?.ecc_errors)?.correctable), now),
    sel_seen: rememberSel(input, ipmi),
  };
}

/**
 * Changes of the correctable count only (they are rare, readings are every
 * few minutes), within 24 h, plus the last older entry as the baseline the
 * window's first change is measured from. See eccRise.
 */
function rememberEcc(input: RuleInput, current: number | null, now: number): Array<[string, number]> {
  const history = eccHistory(input.previous);
  if (current !== null && (history.length === 0 || history[history.length - 1]![1] !== current)) history.push([now, current]);
  const firstInWindow = history.findIndex(([at]) => at >= now - DAY_MS);
  const start = firstInWindow === -1 ? history.length - 1 : Math.max(0, firstInWindow - 1);
  return history.slice(Math.max(start, history.length - MAX_ECC_ENTRIES)).map(([at, count]) => [new Date(at).toISOString(), count]);
}

/** Critical SEL events seen, most recent last; those still in the agent's excerpt move to the end so the bound never forgets them. */
function rememberSel(input: RuleInput, ipmi: ReturnType<typeof ipmiOf>): string[] {
  const current = criticalSelEvents(ipmi).map((e) => e.key);
  const present = new Set(current);
  const kept = [...seenSel(input.previous)].filter((key) => !present.has(key));
  return [...kept, ...present].slice(-MAX_SEL_SEEN);
}
