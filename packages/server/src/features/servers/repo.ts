import type { ExpressionBuilder, Insertable, Kysely, Selectable, Transaction, Updateable } from 'kysely';
import type { Database, ServersTable } from '../../store/schema.js';
import { ACTIVE, resolveTypes } from '../alerts/changes-repo.js';
import { DEFAULT_INTERVAL_SECONDS, MISSED_INTERVALS_OFFLINE } from '../health/status.js';
import type { PagePosition } from './cursor.js';

export type ServerRow = Selectable<ServersTable>;
export type NewServer = Insertable<ServersTable>;
export type ServerChanges = Pick<Updateable<ServersTable>, 'name' | 'name_is_placeholder' | 'profile'>;

/** A server that never reported counts as unreachable this long after registration (or restore). */
export const NEVER_REPORTED_GRACE_MS = 20 * 60_000;

/** Alert types to resolve (resolved_by 'mute') in the transaction that sets a profile silencing them. */
export interface Silencing {
  types: readonly string[];
  now: string;
}

/** The unreachable deadline of a server that starts being watched at nowMs: its grace if it never reported, else 3 intervals. */
function freshDeadline(eb: ExpressionBuilder<Database, 'servers'>, nowMs: number) {
  const now = eb.cast<number>(eb.val(nowMs), 'bigint');
  return eb.case()
    .when('last_seen_at', 'is', null).then(eb(now, '+', eb.lit(NEVER_REPORTED_GRACE_MS)))
    .else(eb(now, '+', eb(eb.lit(MISSED_INTERVALS_OFFLINE * 1000), '*', eb.fn.coalesce('push_interval_seconds', eb.lit(DEFAULT_INTERVAL_SECONDS)))))
    .end();
}

/** server_tags mirrors servers.tags so the list can filter by tag with an index. */
async function writeTags(tx: Transaction<Database>, accountId: string, serverId: string, tags: string[]): Promise<void> {
  await tx.deleteFrom('server_tags').where('server_id', '=', serverId).execute();
  if (tags.length > 0) {
    await tx.insertInto('server_tags').values(tags.map((tag) => ({ server_id: serverId, account_id: accountId, tag }))).execute();
  }
}

/** Every query is scoped by account: another account's server id behaves as an unknown one. */
export function serversRepo(db: Kysely<Database>) {
  const live = (accountId: string) =>
    db.selectFrom('servers').selectAll().where('account_id', '=', accountId).where('trashed_at', 'is', null);

  return {
    async insert(row: NewServer, tags: string[]): Promise<void> {
      await db.transaction().execute(async (tx) => {
        await tx.insertInto('servers').values(row).execute();
        await writeTags(tx, row.account_id, row.id, tags);
      });
    },

    /** A server that is not in the trash. */
    findLive(accountId: string, serverId: string): Promise<ServerRow | undefined> {
      return live(accountId).where('id', '=', serverId).executeTakeFirst();
    },

    /** A server in any state, trashed included. */
    findAny(accountId: string, serverId: string): Promise<ServerRow | undefined> {
      return db.selectFrom('servers').selectAll()
        .where('account_id', '=', accountId).where('id', '=', serverId).executeTakeFirst();
    },

    /** One page in (created_at, id) order, after `after`; servers carrying every tag in `tags`. */
    page(accountId: string, options: { tags: string[]; after: PagePosition | null; limit: number }): Promise<ServerRow[]> {
      let query = live(accountId);
      const { tags, after } = options;
      if (tags.length > 0) {
        query = query.where('id', 'in', db.selectFrom('server_tags').select('server_id')
          .where('account_id', '=', accountId).where('tag', 'in', tags)
          .groupBy('server_id')
          .having((eb) => eb(eb.fn.countAll(), '=', tags.length)));
      }
      if (after) {
        query = query.where((eb) => eb.or([
          eb('created_at', '>', after.created_at),
          eb.and([eb('created_at', '=', after.created_at), eb('id', '>', after.id)]),
        ]));
      }
      return query.orderBy('created_at').orderBy('id').limit(options.limit).execute();
    },

    /** The latest snapshot's JSON text of a server (the caller has checked the server is the account's). */
    async latestSnapshot(serverId: string): Promise<string | null> {
      const row = await db.selectFrom('latest_snapshots').select('snapshot').where('server_id', '=', serverId).executeTakeFirst();
      return row?.snapshot ?? null;
    },

    listTrashed(accountId: string): Promise<ServerRow[]> {
      return db.selectFrom('servers').selectAll()
        .where('account_id', '=', accountId).where('trashed_at', 'is not', null)
        .orderBy('trashed_at', 'desc').orderBy('id', 'desc')
        .execute();
    },

    /**
     * Applies changes to a live server; `tags` (when given) replaces its
     * tags; `silence` resolves the server's active alerts of those types in
     * the same transaction. False when there is no such server.
     */
    async update(accountId: string, serverId: string, changes: ServerChanges, tags?: string[], silence?: Silencing): Promise<boolean> {
      const set: Updateable<ServersTable> = tags ? { ...changes, tags: JSON.stringify(tags) } : { ...changes };
      if (Object.keys(set).length === 0) return (await live(accountId).where('id', '=', serverId).executeTakeFirst()) !== undefined;
      return db.transaction().execute(async (tx) => {
        // The row update comes first: it locks the server, so concurrent tag rewrites and pushes cannot interleave.
        const server = await tx.updateTable('servers').set(set)
          .where('id', '=', serverId).where('account_id', '=', accountId).where('trashed_at', 'is', null)
          .returning(['id', 'account_id', 'name', 'hostname', 'tags'])
          .executeTakeFirst();
        if (!server) return false;
        if (tags) await writeTags(tx, accountId, serverId, tags);
        if (silence) await resolveTypes(tx, server, silence.types, 'mute', silence.now);
        return true;
      });
    },

    /**
     * Replaces config_overrides (JSON text) and its interval mirror, and
     * moves the unreachable deadline to 3 of the new intervals after the
     * last snapshot (a server that never reported keeps its registration
     * deadline). False when there is no such live server.
     */
    async replaceConfigOverrides(accountId: string, serverId: string, json: string, intervalSeconds: number | null): Promise<boolean> {
      return db.transaction().execute(async (tx) => {
        const row = await tx.updateTable('servers').set({ config_overrides: json, push_interval_seconds: intervalSeconds })
          .where('id', '=', serverId).where('account_id', '=', accountId).where('trashed_at', 'is', null)
          .returning(['last_seen_at'])
          .executeTakeFirst();
        if (!row) return false;
        if (row.last_seen_at !== null) {
          const interval = intervalSeconds ?? DEFAULT_INTERVAL_SECONDS;
          await tx.updateTable('servers')
            .set({ unreachable_at_ms: Date.parse(row.last_seen_at) + MISSED_INTERVALS_OFFLINE * interval * 1000 })
            .where('id', '=', serverId)
            .execute();
        }
        return true;
      });
    },

    /** Active alerts per server: one grouped query per page (per 500 servers); servers without any are absent. */
    async activeAlertCounts(serverIds: readonly string[]): Promise<Map<string, number>> {
      const counts = new Map<string, number>();
      for (let i = 0; i < serverIds.length; i += 500) {
        const rows = await db.selectFrom('alerts')
          .select((eb) => ['server_id', eb.fn.countAll<number>().as('n')])
          .where('server_id', 'in', serverIds.slice(i, i + 500)).where('status', '=', ACTIVE)
          .groupBy('server_id')
          .execute();
        for (const row of rows) counts.set(row.server_id, Number(row.n));
      }
      return counts;
    },

    async trash(accountId: string, serverId: string, now: string): Promise<boolean> {
      const result = await db.updateTable('servers').set({ trashed_at: now })
        .where('id', '=', serverId).where('account_id', '=', accountId).where('trashed_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    /**
     * Takes a server out of the trash and out of suspension at once; false
     * when it was in neither. The unreachable watchdog starts counting anew
     * from `nowMs`: the agent was refused (or not watched) until now and
     * gets its usual time to report.
     */
    async restore(accountId: string, serverId: string, nowMs: number): Promise<boolean> {
      const result = await db.updateTable('servers')
        .set((eb) => ({ trashed_at: null, status: 'active', suspended_at: null, suspended_reason: null, unreachable_at_ms: freshDeadline(eb, nowMs) }))
        .where('id', '=', serverId).where('account_id', '=', accountId)
        .where((eb) => eb.or([eb('trashed_at', 'is not', null), eb('status', '=', 'suspended')]))
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    /** Reactivates live servers suspended for a reason; returns their ids, oldest server first. */
    async restoreSuspended(accountId: string, reason: string, nowMs: number): Promise<string[]> {
      const rows = await db.updateTable('servers')
        .set((eb) => ({ status: 'active', suspended_at: null, suspended_reason: null, unreachable_at_ms: freshDeadline(eb, nowMs) }))
        .where('account_id', '=', accountId).where('trashed_at', 'is', null)
        .where('status', '=', 'suspended').where('suspended_reason', '=', reason)
        .returning(['id', 'created_at'])
        .execute();
      rows.sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? -1 : 1) : a.created_at < b.created_at ? -1 : 1));
      return rows.map((row) => row.id);
    },

    /** Historical state only (billing enforcement is retired); kept for imports and tests. */
    async suspend(accountId: string, serverId: string, at: string, reason: string): Promise<boolean> {
      const result = await db.updateTable('servers').set({ status: 'suspended', suspended_at: at, suspended_reason: reason })
        .where('id', '=', serverId).where('account_id', '=', accountId)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async rotateKey(accountId: string, serverId: string, keyHash: string, now: string): Promise<boolean> {
      const result = await db.updateTable('servers').set({ collector_key_hash: keyHash, key_rotated_at: now })
        .where('id', '=', serverId).where('account_id', '=', accountId).where('trashed_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    /**
     * Destroys a trashed server and everything stored about it, in one
     * transaction. Every table that holds a server's data (metrics, alerts,
     * snapshots, mutes…) gets its delete here, children before the server.
     */
    async purge(accountId: string, serverId: string): Promise<boolean> {
      return db.transaction().execute(async (tx) => {
        // Touching the row first locks it (PostgreSQL), so a concurrent restore cannot slip between the deletes.
        const claimed = await tx.updateTable('servers').set({ trashed_at: (eb) => eb.ref('trashed_at') })
          .where('id', '=', serverId).where('account_id', '=', accountId).where('trashed_at', 'is not', null)
          .executeTakeFirst();
        if (Number(claimed.numUpdatedRows) === 0) return false;
        await tx.deleteFrom('notification_outbox').where('server_id', '=', serverId).execute();
        await tx.deleteFrom('alerts').where('server_id', '=', serverId).execute();
        await tx.deleteFrom('server_mutes').where('server_id', '=', serverId).execute();
        await tx.deleteFrom('latest_snapshots').where('server_id', '=', serverId).execute();
        await tx.deleteFrom('metric_samples').where('server_id', '=', serverId).execute();
        await tx.deleteFrom('metric_rollups').where('server_id', '=', serverId).execute();
        await tx.deleteFrom('server_tags').where('server_id', '=', serverId).execute();
        await tx.deleteFrom('servers').where('id', '=', serverId).execute();
        return true;
      });
    },
  };
}

export type ServersRepo = ReturnType<typeof serversRepo>;
