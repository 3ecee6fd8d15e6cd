import type { ExpressionBuilder, Kysely, Selectable } from 'kysely';
import type { Database, IdempotencyKeysTable } from '../store/schema.js';

export type IdempotencyRow = Selectable<IdempotencyKeysTable>;

/** A claim is identified by its lock deadline: a later takeover always sets a later one. */
export interface ClaimRef {
  account_id: string;
  idem_key: string;
  locked_until: string;
}

export function idempotencyRepo(db: Kysely<Database>) {
  const byKey = (ref: { account_id: string; idem_key: string }) =>
    (eb: ExpressionBuilder<Database, 'idempotency_keys'>) =>
      eb.and([eb('account_id', '=', ref.account_id), eb('idem_key', '=', ref.idem_key)]);

  return {
    /** Inserts the in-flight row unless the key exists; atomic on both dialects through the primary key. */
    async insertClaim(row: IdempotencyRow): Promise<boolean> {
      const inserted = await db.insertInto('idempotency_keys').values(row)
        .onConflict((oc) => oc.columns(['account_id', 'idem_key']).doNothing())
        .returning('idem_key')
        .executeTakeFirst();
      return inserted !== undefined;
    },

    find(accountId: string, key: string): Promise<IdempotencyRow | undefined> {
      return db.selectFrom('idempotency_keys').selectAll()
        .where(byKey({ account_id: accountId, idem_key: key })).executeTakeFirst();
    },

    /**
     * Replaces a row whose 24 hours are over or whose holder stopped before
     * finishing (lock expired). The condition sits in the UPDATE, so of two
     * concurrent takeovers only one matches.
     */
    async takeOver(row: IdempotencyRow, now: string): Promise<boolean> {
      const result = await db.updateTable('idempotency_keys').set(row)
        .where(byKey(row))
        .where((eb) => eb.or([
          eb('expires_at', '<=', now),
          eb.and([eb('state', '=', 'in_flight'), eb('locked_until', '<=', now)]),
        ]))
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    /** Stores the response of a claim still held; a claim taken over meanwhile is left to its new holder. */
    async complete(claim: ClaimRef, statusCode: number, responseBody: string): Promise<void> {
      await db.updateTable('idempotency_keys').set({ state: 'done', status_code: statusCode, response_body: responseBody })
        .where(byKey(claim)).where('state', '=', 'in_flight').where('locked_until', '=', claim.locked_until)
        .execute();
    },

    /** Frees the key for a retry (the request failed in a way worth retrying). */
    async release(claim: ClaimRef): Promise<void> {
      await db.deleteFrom('idempotency_keys')
        .where(byKey(claim)).where('state', '=', 'in_flight').where('locked_until', '=', claim.locked_until)
        .execute();
    },

    /** Removes expired rows; claims replace them anyway, so this only bounds the table (for a retention job). */
    async deleteExpired(now: string): Promise<number> {
      const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    /** Drops a finished row that can no longer be replayed, unless it changed since it was read. */
    async discard(row: ClaimRef): Promise<void> {
      await db.deleteFrom('idempotency_keys')
        .where(byKey(row)).where('state', '=', 'done').where('locked_until', '=', row.locked_until)
        .execute();
    },
  };
}

export type IdempotencyRepo = ReturnType<typeof idempotencyRepo>;
