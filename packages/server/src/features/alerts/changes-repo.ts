import { sql, type Transaction } from 'kysely';
import { newId } from '../../lib/ids.js';
import type { Database, OutboxEvent } from '../../store/schema.js';
import type { Decisions } from './reconcile.js';
import { newAlertRow, outboxRow, type AlertRow, type NewAlertFields, type ResolvedBy, type ServerRef } from './records.js';

/**
 * Every write that changes an alert, each with its notification in the
 * outbox, inside the caller's transaction. Callers hold the server's row
 * lock (the ingest claim, lockServer, or the jobs' SKIP LOCKED selection),
 * so reads taken under it stay true until the writes; the status guards
 * below are a second line, and only rows that really changed get an
 * outbox row.
 */

/** Literal, not a bound value, so both planners can use the partial indexes on status = 'active'. */
export const ACTIVE = sql.lit('active' as const);

/** Rows per statement: a hostile snapshot can yield thousands of findings; bound parameters per statement are limited. */
const CHUNK = 500;

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

/** The server each alert belongs to, as notifications show it. */
export type Owners = (serverId: string) => ServerRef;

const ownedBy = (server: ServerRef): Owners => () => server;

async function notify(tx: Transaction<Database>, event: OutboxEvent, alerts: readonly AlertRow[], owners: Owners, now: string): Promise<void> {
  for (const part of chunks(alerts)) {
    await tx.insertInto('notification_outbox').values(part.map((alert) => outboxRow(event, alert, owners(alert.server_id), now))).execute();
  }
}

/**
 * Stores new alerts, of one or many servers; one that collides with an
 * active alert of its key (another process raised it first) is skipped.
 * Returns those stored.
 */
export async function raiseAcross(tx: Transaction<Database>, items: ReadonlyArray<{ server: ServerRef; fields: NewAlertFields }>, now: string): Promise<AlertRow[]> {
  const raised: AlertRow[] = [];
  const owners = new Map(items.map(({ server }) => [server.id, server]));
  for (const part of chunks(items)) {
    const rows = part.map(({ server, fields }) => newAlertRow(newId('alt'), server, fields));
    const stored = await tx.insertInto('alerts').values(rows).onConflict((oc) => oc.doNothing()).returning('id').execute();
    const ids = new Set(stored.map((r) => r.id));
    raised.push(...rows.filter((row) => ids.has(row.id)));
  }
  await notify(tx, 'alert.raised', raised, (id) => owners.get(id)!, now);
  return raised;
}

export function raiseAlerts(tx: Transaction<Database>, server: ServerRef, fields: readonly NewAlertFields[], now: string): Promise<AlertRow[]> {
  return raiseAcross(tx, fields.map((f) => ({ server, fields: f })), now);
}

/** Resolves active alerts by id, of one or many servers; returns those this call resolved (already resolved ones are left alone). */
export async function resolveAcross(tx: Transaction<Database>, owners: Owners, ids: readonly string[], by: ResolvedBy, now: string): Promise<AlertRow[]> {
  const done: AlertRow[] = [];
  for (const part of chunks(ids)) {
    done.push(...await tx.updateTable('alerts')
      .set({ status: 'resolved', resolved_at: now, resolved_by: by })
      .where('id', 'in', part).where('status', '=', ACTIVE)
      .returningAll()
      .execute());
  }
  await notify(tx, 'alert.resolved', done, owners, now);
  return done;
}

export function resolveAlerts(tx: Transaction<Database>, server: ServerRef, ids: readonly string[], by: ResolvedBy, now: string): Promise<AlertRow[]> {
  return resolveAcross(tx, ownedBy(server), ids, by, now);
}

/** Resolves the server's active alerts of some types (mute, profile); returns those resolved. */
export async function resolveTypes(tx: Transaction<Database>, server: ServerRef, types: readonly string[], by: ResolvedBy, now: string): Promise<AlertRow[]> {
  if (types.length === 0) return [];
  const done = await tx.updateTable('alerts')
    .set({ status: 'resolved', resolved_at: now, resolved_by: by })
    .where('server_id', '=', server.id).where('status', '=', ACTIVE).where('alert_type', 'in', types)
    .returningAll()
    .execute();
  await notify(tx, 'alert.resolved', done, ownedBy(server), now);
  return done;
}

/** Stores one snapshot's decisions; returns how many alerts it raised and how many it resolved. */
export async function applyDecisions(tx: Transaction<Database>, server: ServerRef, decisions: Decisions, now: string): Promise<{ raised: number; resolved: number }> {
  const stacked: AlertRow[] = [];
  for (const alert of decisions.stack) {
    const row = await tx.updateTable('alerts')
      .set((eb) => ({
        severity: alert.severity, title: alert.title, message: alert.message, evidence: alert.evidence, recommendation: alert.recommendation,
        occurrences: eb('occurrences', '+', 1), last_seen_at: now, acknowledged: 0, acknowledged_at: null,
      }))
      .where('id', '=', alert.id).where('status', '=', ACTIVE)
      .returningAll()
      .executeTakeFirst();
    if (row) stacked.push(row);
  }
  await notify(tx, 'alert.occurred', stacked, ownedBy(server), now);

  const unchanged: string[] = [];
  for (const { alert, changed } of decisions.update) {
    if (!changed) {
      unchanged.push(alert.id);
      continue;
    }
    await tx.updateTable('alerts')
      .set({ severity: alert.severity, title: alert.title, message: alert.message, evidence: alert.evidence, recommendation: alert.recommendation, last_seen_at: now })
      .where('id', '=', alert.id).where('status', '=', ACTIVE)
      .execute();
  }
  for (const part of chunks(unchanged)) {
    await tx.updateTable('alerts').set({ last_seen_at: now }).where('id', 'in', part).where('status', '=', ACTIVE).execute();
  }

  let resolved = 0;
  const byCause = new Map<ResolvedBy, string[]>();
  for (const alert of decisions.resolve) {
    const by = alert.resolved_by ?? 'condition';
    byCause.set(by, [...(byCause.get(by) ?? []), alert.id]);
  }
  for (const [by, ids] of byCause) resolved += (await resolveAlerts(tx, server, ids, by, now)).length;

  const raised = decisions.raise.length === 0 ? 0 : (await raiseAlerts(tx, server, decisions.raise, now)).length;
  return { raised, resolved };
}
