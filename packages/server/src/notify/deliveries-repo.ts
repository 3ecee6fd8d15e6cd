import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Database, DeliveriesTable } from '../store/schema.js';

export type DeliveryRow = Selectable<DeliveriesTable>;
export type NewDeliveryAttempt = Insertable<DeliveriesTable>;

/** Where a page of attempts ended: the keyset (created_at, id, attempt) of its last row, newest first. */
export type DeliveryPosition = readonly [created_at: string, id: string, attempt: number];

/**
 * The body of recordAttempt, for callers that already hold a transaction
 * (the delivery worker records the attempt and moves its task in one go).
 */
export async function insertAttempt(tx: Kysely<Database>, attempt: NewDeliveryAttempt): Promise<void> {
  await tx.insertInto('deliveries').values(attempt).execute();
  await tx.updateTable('channels')
    .set({ last_delivery_at: attempt.created_at, last_delivery_status: attempt.status })
    .where('id', '=', attempt.channel_id)
    .where((eb) => eb.or([eb('last_delivery_at', 'is', null), eb('last_delivery_at', '<=', attempt.created_at)]))
    .execute();
}

export function deliveriesRepo(db: Kysely<Database>) {
  return {
    /**
     * Records one attempt and moves the channel's last delivery to it, in
     * one transaction. An attempt older than the channel's last one (a slow
     * worker finishing late) does not move it back. An attempt of an outbox
     * row already recorded (another worker got there first) violates the
     * unique index and throws, so the caller learns it lost the race.
     */
    async recordAttempt(attempt: NewDeliveryAttempt): Promise<void> {
      await db.transaction().execute((tx) => insertAttempt(tx, attempt));
    },

    /** Attempts of one channel, newest first, after `after`. */
    page(channelId: string, options: { after: DeliveryPosition | null; limit: number }): Promise<DeliveryRow[]> {
      let query = db.selectFrom('deliveries').selectAll().where('channel_id', '=', channelId);
      if (options.after) {
        const [createdAt, id, attempt] = options.after;
        query = query.where((eb) => eb.or([
          eb('created_at', '<', createdAt),
          eb.and([eb('created_at', '=', createdAt), eb('id', '<', id)]),
          eb.and([eb('created_at', '=', createdAt), eb('id', '=', id), eb('attempt', '<', attempt)]),
        ]));
      }
      return query.orderBy('created_at', 'desc').orderBy('id', 'desc').orderBy('attempt', 'desc').limit(options.limit).execute();
    },
  };
}

export type DeliveriesRepo = ReturnType<typeof deliveriesRepo>;
