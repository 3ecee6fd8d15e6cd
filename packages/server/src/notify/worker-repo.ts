import { sql, type Kysely } from 'kysely';
import { channelsRepo } from '../features/channels/repo.js';
import { newId } from '../lib/ids.js';
import type { Dialect, Store } from '../store/db.js';
import type { Database, DeliveryTaskState, OutboxEvent } from '../store/schema.js';
import { insertAttempt, type NewDeliveryAttempt } from './deliveries-repo.js';

/** A task this worker holds the lease of, with what sending it needs. */
export interface ClaimedTask {
  delivery_id: string;
  outbox_id: number;
  claim_id: string;
  attempts: number;
  account_id: string;
  channel_id: string;
  channel_type: string;
  channel_config: string;
  channel_enabled: number;
  event: OutboxEvent;
  alert_id: string;
  payload: string;
  outbox_created_at: string;
  /** The alert's acknowledgement now (null when the alert is gone: its server was purged). */
  alert_acknowledged: number | null;
}

/** How a claimed task ends this round: finished, or pending again until `nextAttemptAt`. */
export interface TaskOutcome {
  state: DeliveryTaskState;
  attempts: number;
  nextAttemptAt: string;
  /** The attempt to record; none when the task was skipped without sending. */
  attempt: NewDeliveryAttempt | null;
}

/**
 * The delivery worker's queries. On PostgreSQL several service processes
 * run them at once: rows are claimed with FOR UPDATE SKIP LOCKED in short
 * transactions, so two workers never take the same row, and a task's claim
 * is a lease (claimed_until) that a crashed worker's claim runs out of. On
 * SQLite one process writes and statements are serialised; the same SQL
 * without the locking clause does.
 */
export function workerRepo({ db, dialect }: { db: Kysely<Database>; dialect: Dialect }) {
  const locking = dialect === 'postgres';

  return {
    /**
     * Plans the deliveries of up to `limit` outbox rows not yet planned: one
     * task (and one delivery id, kept across retries) per channel enabled
     * now. A row whose account has no enabled channel is dispatched at once.
     * Returns how many rows were planned.
     */
    async fanOut(now: string, limit: number): Promise<number> {
      return db.transaction().execute(async (tx) => {
        let pending = tx.selectFrom('notification_outbox').select(['id', 'account_id'])
          .where('fanned_out_at', 'is', null).orderBy('id').limit(limit);
        if (locking) pending = pending.forUpdate().skipLocked();
        const rows = await pending.execute();
        const channelsOf = new Map<string, string[]>();
        for (const row of rows) {
          let channels = channelsOf.get(row.account_id);
          if (!channels) {
            channels = (await channelsRepo(tx).listEnabled(row.account_id)).map((c) => c.id);
            channelsOf.set(row.account_id, channels);
          }
          if (channels.length > 0) {
            await tx.insertInto('delivery_tasks')
              .values(channels.map((channelId) => ({
                delivery_id: newId('dlv'), outbox_id: row.id, channel_id: channelId, account_id: row.account_id,
                state: 'pending' as const, attempts: 0, next_attempt_at: now, claim_id: null, claimed_until: null,
              })))
              // A second planner (a lock skipped by mistake, a replayed run) must not plan a channel twice.
              .onConflict((oc) => oc.columns(['outbox_id', 'channel_id']).doNothing())
              .execute();
          }
          await tx.updateTable('notification_outbox')
            .set({ fanned_out_at: now, dispatched_at: channels.length > 0 ? null : now })
            .where('id', '=', row.id).execute();
        }
        return rows.length;
      });
    },

    /**
     * Takes the lease of up to `limit` due tasks (pending, due, unclaimed or
     * with a lease run out), oldest due first, and returns them with their
     * outbox row, channel and alert state.
     */
    async claimDue(now: string, leaseUntil: string, limit: number): Promise<ClaimedTask[]> {
      const claimId = newId('dlv');
      const claimed = await db.transaction().execute(async (tx) => {
        let due = tx.selectFrom('delivery_tasks').select('delivery_id')
          .where('state', '=', 'pending').where('next_attempt_at', '<=', now)
          .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<=', now)]))
          .orderBy('next_attempt_at').limit(limit);
        if (locking) due = due.forUpdate().skipLocked();
        const ids = (await due.execute()).map((r) => r.delivery_id);
        if (ids.length === 0) return [];
        await tx.updateTable('delivery_tasks').set({ claim_id: claimId, claimed_until: leaseUntil })
          .where('delivery_id', 'in', ids).execute();
        return ids;
      });
      if (claimed.length === 0) return [];
      const rows = await db.selectFrom('delivery_tasks as t')
        .innerJoin('notification_outbox as o', 'o.id', 't.outbox_id')
        .innerJoin('channels as c', 'c.id', 't.channel_id')
        .leftJoin('alerts as a', 'a.id', 'o.alert_id')
        .select([
          't.delivery_id', 't.outbox_id', 't.attempts', 't.account_id', 't.channel_id', 't.claim_id',
          'c.channel_type', 'c.config as channel_config', 'c.enabled as channel_enabled',
          'o.event', 'o.alert_id', 'o.payload', 'o.created_at as outbox_created_at', 'a.acknowledged as alert_acknowledged',
        ])
        .where('t.delivery_id', 'in', claimed).where('t.claim_id', '=', claimId)
        .orderBy('t.next_attempt_at').execute();
      return rows.map((r) => ({ ...r, claim_id: claimId }));
    },

    /**
     * Ends this round of a task and records its attempt, in one transaction,
     * if the lease is still ours. Returns false when another worker took the
     * task meanwhile (our lease ran out): nothing is written then.
     */
    async complete(task: ClaimedTask, outcome: TaskOutcome): Promise<boolean> {
      return db.transaction().execute(async (tx) => {
        const moved = await tx.updateTable('delivery_tasks')
          .set({ state: outcome.state, attempts: outcome.attempts, next_attempt_at: outcome.nextAttemptAt, claim_id: null, claimed_until: null })
          .where('delivery_id', '=', task.delivery_id).where('claim_id', '=', task.claim_id)
          .executeTakeFirst();
        if (Number(moved.numUpdatedRows) === 0) return false;
        if (outcome.attempt) await insertAttempt(tx, outcome.attempt);
        return true;
      });
    },

    /**
     * Marks planned outbox rows whose every task is final as dispatched. A
     * single idempotent statement rather than a step of each completion, so
     * two workers finishing a row's last two tasks at once cannot both leave
     * it to the other.
     */
    async markDispatched(now: string): Promise<void> {
      await db.updateTable('notification_outbox').set({ dispatched_at: now })
        .where('dispatched_at', 'is', null).where('fanned_out_at', 'is not', null)
        .where(({ not, exists, selectFrom }) => not(exists(
          selectFrom('delivery_tasks').select(sql.lit(1).as('one'))
            .whereRef('delivery_tasks.outbox_id', '=', 'notification_outbox.id')
            .where('delivery_tasks.state', '=', 'pending'),
        )))
        .execute();
    },
  };
}

export type WorkerRepo = ReturnType<typeof workerRepo>;
export type WorkerStore = Pick<Store, 'db' | 'dialect'>;
