import type { Kysely, SelectQueryBuilder, Transaction } from 'kysely';
import type { Dialect } from '../../store/db.js';
import type { Database } from '../../store/schema.js';
import { ACTIVE } from './changes-repo.js';
import type { AlertRow, ServerRef } from './records.js';

export interface AlertFilter {
  status?: 'active' | 'resolved';
  severity?: 'critical' | 'warning' | 'info';
  /** ISO; alerts that were active at some moment in [from, to). */
  from?: string;
  to?: string;
}

export interface LockedServer extends ServerRef {
  profile: string | null;
}

/**
 * Queries of the alert endpoints. Every lookup is scoped by account and
 * skips trashed servers: another account's alert or server is as unknown
 * as a missing one.
 */
export function alertsRepo(db: Kysely<Database>, dialect: Dialect) {
  function filtered<O>(query: SelectQueryBuilder<Database, 'alerts', O>, serverId: string, filter: AlertFilter) {
    let q = query.where('server_id', '=', serverId);
    if (filter.status) q = q.where('status', '=', filter.status);
    if (filter.severity) q = q.where('severity', '=', filter.severity);
    if (filter.to) q = q.where('first_seen_at', '<', filter.to);
    if (filter.from) {
      const from = filter.from;
      q = q.where((eb) => eb.or([eb('resolved_at', 'is', null), eb('resolved_at', '>=', from)]));
    }
    return q;
  }

  return {
    transaction<T>(work: (tx: Transaction<Database>) => Promise<T>): Promise<T> {
      return db.transaction().execute(work);
    },

    /**
     * A live server of the account, locked until the transaction ends: every
     * alert change holds its server's lock, so a push of the same server
     * cannot interleave (PostgreSQL row lock; SQLite has one writer).
     */
    lockServer(tx: Transaction<Database>, accountId: string, serverId: string): Promise<LockedServer | undefined> {
      const query = tx.selectFrom('servers').select(['id', 'account_id', 'name', 'hostname', 'tags', 'profile'])
        .where('id', '=', serverId).where('account_id', '=', accountId).where('trashed_at', 'is', null);
      return (dialect === 'postgres' ? query.forNoKeyUpdate() : query).executeTakeFirst();
    },

    async serverExists(accountId: string, serverId: string): Promise<boolean> {
      const row = await db.selectFrom('servers').select('id')
        .where('id', '=', serverId).where('account_id', '=', accountId).where('trashed_at', 'is', null)
        .executeTakeFirst();
      return row !== undefined;
    },

    /** An alert of a live server of the account. */
    findAlert(accountId: string, alertId: string, tx: Kysely<Database> = db): Promise<AlertRow | undefined> {
      return tx.selectFrom('alerts').selectAll('alerts')
        .innerJoin('servers', 'servers.id', 'alerts.server_id')
        .where('alerts.id', '=', alertId).where('alerts.account_id', '=', accountId)
        .where('servers.trashed_at', 'is', null)
        .executeTakeFirst();
    },

    /** One page, newest first (raised time, then id). */
    list(serverId: string, filter: AlertFilter, offset: number, limit: number): Promise<AlertRow[]> {
      return filtered(db.selectFrom('alerts').selectAll(), serverId, filter)
        .orderBy('first_seen_at', 'desc').orderBy('id', 'desc')
        .offset(offset).limit(limit)
        .execute();
    },

    async count(serverId: string, filter: AlertFilter): Promise<number> {
      const row = await filtered(db.selectFrom('alerts').select((eb) => eb.fn.countAll<number>().as('n')), serverId, filter)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    /** Marks an active alert acknowledged (keeping the first acknowledgement's time); the alert as it is afterwards. */
    async acknowledge(alertId: string, now: string): Promise<AlertRow | undefined> {
      return db.updateTable('alerts')
        .set((eb) => ({ acknowledged: 1, acknowledged_at: eb.fn.coalesce('acknowledged_at', eb.val(now)) }))
        .where('id', '=', alertId).where('status', '=', ACTIVE)
        .returningAll()
        .executeTakeFirst();
    },

    async mutedTypes(serverId: string, tx: Kysely<Database> = db): Promise<string[]> {
      const rows = await tx.selectFrom('server_mutes').select('alert_type').where('server_id', '=', serverId).orderBy('alert_type').execute();
      return rows.map((row) => row.alert_type);
    },

    async addMute(tx: Transaction<Database>, serverId: string, alertType: string, now: string): Promise<void> {
      await tx.insertInto('server_mutes').values({ server_id: serverId, alert_type: alertType, created_at: now })
        .onConflict((oc) => oc.doNothing())
        .execute();
    },

    async removeMute(tx: Transaction<Database>, serverId: string, alertType: string): Promise<void> {
      await tx.deleteFrom('server_mutes').where('server_id', '=', serverId).where('alert_type', '=', alertType).execute();
    },
  };
}

export type AlertsRepo = ReturnType<typeof alertsRepo>;
