import type { Kysely, Selectable } from 'kysely';
import type { Database, LegacySubscriptionsTable } from '../../store/schema.js';

export type LegacySubscriptionRow = Selectable<LegacySubscriptionsTable>;

export interface ServerCounts {
  active: number;
  suspendedNoCard: number;
}

export function billingRepo(db: Kysely<Database>) {
  return {
    findLegacy(accountId: string): Promise<LegacySubscriptionRow | undefined> {
      return db.selectFrom('legacy_subscriptions').selectAll().where('account_id', '=', accountId).executeTakeFirst();
    },

    /** Both counts in one pass over the account's servers; trashed servers count nowhere. */
    async serverCounts(accountId: string): Promise<ServerCounts> {
      const row = await db.selectFrom('servers')
        .select((eb) => [
          eb.fn.sum<number | string | null>(
            eb.case().when('status', '=', 'active').then(1).else(0).end(),
          ).as('active'),
          eb.fn.sum<number | string | null>(
            eb.case().when(eb.and([eb('status', '=', 'suspended'), eb('suspended_reason', '=', 'no_card_on_file')]))
              .then(1).else(0).end(),
          ).as('suspended_no_card'),
        ])
        .where('account_id', '=', accountId)
        .where('trashed_at', 'is', null)
        .executeTakeFirstOrThrow();
      // SUM over no rows is NULL; PostgreSQL returns bigint sums (parsed to numbers by the store).
      return { active: Number(row.active ?? 0), suspendedNoCard: Number(row.suspended_no_card ?? 0) };
    },

    /** False when the account has no legacy subscription row. */
    async setCancelAtPeriodEnd(accountId: string, cancel: boolean): Promise<boolean> {
      const result = await db.updateTable('legacy_subscriptions')
        .set({ cancel_at_period_end: cancel ? 1 : 0 })
        .where('account_id', '=', accountId)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },
  };
}

export type BillingRepo = ReturnType<typeof billingRepo>;
