import { createHash } from 'node:crypto';
import { num, obj, objects, text, type Obj } from './common.js';
import type { RuleInput, RuleMemory } from './types.js';

/**
 * Reading the IPMI block as agents send it (`ipmitool sensor` and `sel
 * elist` parsed), shared by the IPMI rules and by rememberSnapshot, which
 * must agree with them on ECC history and on which SEL events were seen.
 */

export const DAY_MS = 24 * 60 * 60 * 1000;

/** The IPMI block when the agent could read the BMC; `available: false` means it could not, not that all is well. */
export function ipmiOf(input: RuleInput): Obj | null {
  const ipmi = obj(input.snapshot.ipmi);
  return ipmi && ipmi.available !== false ? ipmi : null;
}

export interface Sensor { name: string; type: string; unit: string; status: string; value: number | null; s: Obj }

export function sensors(ipmi: Obj | null): Sensor[] {
  const out: Sensor[] = [];
  for (const s of objects(ipmi?.sensors)) {
    const name = text(s.name, 100);
    if (name === null) continue;
    out.push({
      name,
      type: text(s.type, 64)?.toLowerCase() ?? '',
      unit: text(s.unit, 64)?.toLowerCase() ?? '',
      status: text(s.status, 64)?.trim().toLowerCase() ?? '',
      value: num(s.value),
      s,
    });
  }
  return out;
}

/**
 * Critical statuses: `ipmitool sdr` says cr and nr; `ipmitool sensor` names
 * the crossed threshold (lcr, ucr, lnr, unr); agents that translate write
 * the words.
 */
const CRITICAL = new Set(['cr', 'nr', 'lcr', 'ucr', 'lnr', 'unr', 'critical', 'non-recoverable', 'nonrecoverable']);
/** No sensor behind the name: an empty bay, an unpopulated fan header. */
const ABSENT = new Set(['ns', 'na', 'absent', 'not present', 'no reading', 'disabled']);

export const isCritical = (status: string) => CRITICAL.has(status);
export const isAbsent = (status: string) => ABSENT.has(status) || /not present|absent|no reading/.test(status);
export const isFanSensor = (s: Sensor) => s.type.includes('fan') || s.unit === 'rpm';

// ---- ECC -----------------------------------------------------------------

/** The valid [time ms, count] entries of a remembered history, oldest first (memory comes from storage: trust nothing). */
export function eccHistory(previous: RuleMemory | null): Array<[number, number]> {
  const raw = previous && Array.isArray(previous.ecc_correctable) ? previous.ecc_correctable : [];
  const out: Array<[number, number]> = [];
  for (const entry of raw) {
    if (!Array.isArray(entry)) continue;
    const at = typeof entry[0] === 'string' ? Date.parse(entry[0]) : NaN;
    const count = num(entry[1]);
    if (Number.isFinite(at) && count !== null) out.push([at, count]);
  }
  return out.sort((a, b) => a[0] - b[0]);
}

/**
 * How much the correctable count rose within the 24 h before `now`: the sum
 * of the increases between consecutive readings that end in the window. A
 * drop (the counter reset at a reboot or a SEL clear) starts a new baseline
 * instead of cancelling earlier increases.
 */
export function eccRise(history: Array<[number, number]>, now: number, current: number): number {
  const points = [...history, [now, current] as [number, number]];
  let rise = 0;
  for (let i = 1; i < points.length; i++) {
    if (points[i]![0] < now - DAY_MS) continue;
    rise += Math.max(0, points[i]![1] - points[i - 1]![1]);
  }
  return rise;
}

// ---- SEL -----------------------------------------------------------------

export interface SelEvent { key: string; id: string | null; timestamp: string | null; sensor: string | null; event: string | null }

/**
 * The critical, asserted events of the SEL excerpt. Assertion must be
 * stated (`asserted: true`, or `direction: "Asserted"` from older agents):
 * a deasserted record is the condition going away, not a new fault.
 */
export function criticalSelEvents(ipmi: Obj | null): SelEvent[] {
  const out: SelEvent[] = [];
  for (const e of objects(ipmi?.sel_events_recent)) {
    if (text(e.severity, 32)?.trim().toLowerCase() !== 'critical') continue;
    const asserted = e.asserted === true || (e.asserted == null && /^\s*asserted\s*$/i.test(text(e.direction, 32) ?? ''));
    if (!asserted) continue;
    const id = text(e.id, 32) ?? (num(e.id) !== null ? String(e.id) : null);
    const timestamp = text(e.timestamp, 64);
    const sensor = text(e.sensor, 100);
    const event = text(e.event, 200);
    out.push({ key: selKey(id, timestamp, sensor, event), id, timestamp, sensor, event });
  }
  return out;
}

/**
 * A stable, short key for a SEL record. The id alone is not enough: BMCs
 * number records again from 1 after `ipmitool sel clear`.
 */
function selKey(...parts: Array<string | null>): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 16);
}

export function seenSel(previous: RuleMemory | null): Set<string> {
  const raw = previous && Array.isArray(previous.sel_seen) ? previous.sel_seen : [];
  return new Set(raw.filter((k): k is string => typeof k === 'string'));
}
