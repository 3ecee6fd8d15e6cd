import { sql } from 'kysely';
import { iso } from '../../lib/clock.js';
import { HOST_PROFILES } from '../../rules/profiles.js';
import type { Store } from '../../store/db.js';
import { ACTIVE, raiseAcross, resolveAcross } from './changes-repo.js';
import type { ServerRef } from './records.js';
import { UNREACHABLE, unreachableAlert } from './unreachable.js';

/**
 * The set-based work of the alert jobs, one batch per transaction. On
 * PostgreSQL each batch locks the servers it changes with SKIP LOCKED, so
 * several service processes split the work and never wait on a push in
 * progress (that server is simply taken at the next run); on SQLite the one
 * writer serialises everything. Duplicates are impossible either way: the
 * unique index allows one active alert per key, inserts skip a conflict,
 * and resolutions only touch rows still active. Only rows a batch really
 * changed get an outbox row.
 */
type JobStore = Pick<Store, 'db' | 'dialect'>;

const SERVER_REF = ['servers.id', 'servers.account_id', 'servers.name', 'servers.hostname', 'servers.tags'] as const;

/** Resolves (resolved_by 'ttl') up to `limit` active event alerts last seen at or before `cutoff`; returns how many it looked at. */
export async function expireEventAlerts({ db, dialect }: JobStore, cutoff: string, now: Date, limit: number): Promise<number> {
  return db.transaction().execute(async (tx) => {
    let query = tx.selectFrom('alerts')
      .innerJoin('servers', 'servers.id', 'alerts.server_id')
      .select(['alerts.id as alert_id', ...SERVER_REF])
      .where('alerts.status', '=', ACTIVE).where('alerts.kind', '=', sql.lit('event' as const))
      .where('alerts.last_seen_at', '<=', cutoff)
      .orderBy('alerts.last_seen_at')
      .limit(limit);
    if (dialect === 'postgres') query = query.forNoKeyUpdate('servers').skipLocked();
    const rows = await query.execute();
    if (rows.length === 0) return 0;
    const owners = new Map<string, ServerRef>(rows.map(({ alert_id: _, ...server }) => [server.id, server]));
    await resolveAcross(tx, (id) => owners.get(id)!, rows.map((r) => r.alert_id), 'ttl', iso(now));
    return rows.length;
  });
}

// A profile that silenced server_unreachable would exempt its servers; none does today, the query stays ready for one.
const SILENCING_PROFILES = HOST_PROFILES.filter((p) => p.silenced_alert_types.includes(UNREACHABLE)).map((p) => p.id as string);

/**
 * Raises server_unreachable for up to `limit` servers whose deadline has
 * passed: live (not trashed), not suspended, without that alert active and
 * without a mute of it. Returns how many servers it looked at.
 */
export async function raiseUnreachable({ db, dialect }: JobStore, now: Date, limit: number): Promise<number> {
  return db.transaction().execute(async (tx) => {
    let query = tx.selectFrom('servers')
      .select([...SERVER_REF, 'servers.last_seen_at', 'servers.created_at', 'servers.push_interval_seconds'])
      .where('servers.unreachable_at_ms', '<=', now.getTime())
      .where('servers.trashed_at', 'is', null)
      .where('servers.status', '=', sql.lit('active'))
      // Counts rather than NOT EXISTS: PostgreSQL turns NOT EXISTS into an anti-join whose inner side it may
      // scan without the server id when its statistics are stale (1.6 s per run for 3,000 silent servers);
      // a scalar subquery always looks each server up through the unique index.
      .where((eb) => eb(eb.selectFrom('alerts').select((s) => s.fn.countAll<number>().as('n'))
        .whereRef('alerts.server_id', '=', 'servers.id')
        .where('alerts.alert_type', '=', UNREACHABLE).where('alerts.subject_key', '=', '').where('alerts.status', '=', ACTIVE), '=', 0))
      .where((eb) => eb(eb.selectFrom('server_mutes').select((s) => s.fn.countAll<number>().as('n'))
        .whereRef('server_mutes.server_id', '=', 'servers.id').where('server_mutes.alert_type', '=', UNREACHABLE), '=', 0))
      .orderBy('servers.unreachable_at_ms')
      .limit(limit);
    if (SILENCING_PROFILES.length > 0) {
      query = query.where((eb) => eb.or([eb('servers.profile', 'is', null), eb('servers.profile', 'not in', SILENCING_PROFILES)]));
    }
    if (dialect === 'postgres') query = query.forNoKeyUpdate().skipLocked();
    const rows = await query.execute();
    if (rows.length === 0) return 0;
    await raiseAcross(tx, rows.map((row) => ({ server: row, fields: unreachableAlert(row, now) })), iso(now));
    return rows.length;
  });
}
