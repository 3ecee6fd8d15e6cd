import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import type { ChannelsTable, Database } from '../../store/schema.js';

export type ChannelRow = Selectable<ChannelsTable>;
export type ChannelChanges = Pick<Updateable<ChannelsTable>, 'name' | 'config' | 'enabled' | 'updated_at'>;

/** Every query is scoped by account: another account's channel id behaves as an unknown one. */
export function channelsRepo(db: Kysely<Database>) {
  return {
    /**
     * Inserts unless the account already has `max` channels. Touching the
     * account row first serialises concurrent creations of one account
     * (PostgreSQL row lock; SQLite has one writer), so the count cannot race.
     */
    async insertWithinLimit(row: Insertable<ChannelsTable>, max: number): Promise<boolean> {
      return db.transaction().execute(async (tx) => {
        await tx.updateTable('accounts').set({ id: (eb) => eb.ref('id') }).where('id', '=', row.account_id).execute();
        const { n } = await tx.selectFrom('channels').select((eb) => eb.fn.countAll<number>().as('n'))
          .where('account_id', '=', row.account_id).executeTakeFirstOrThrow();
        if (Number(n) >= max) return false;
        await tx.insertInto('channels').values(row).execute();
        return true;
      });
    },

    find(accountId: string, channelId: string): Promise<ChannelRow | undefined> {
      return db.selectFrom('channels').selectAll().where('account_id', '=', accountId).where('id', '=', channelId).executeTakeFirst();
    },

    /** Oldest first; an account holds at most a few dozen channels, so the list is not paged. */
    list(accountId: string): Promise<ChannelRow[]> {
      return db.selectFrom('channels').selectAll().where('account_id', '=', accountId).orderBy('created_at').orderBy('id').execute();
    },

    /** The channels an alert of the account goes to (the delivery worker's fan-out). */
    listEnabled(accountId: string): Promise<ChannelRow[]> {
      return db.selectFrom('channels').selectAll().where('account_id', '=', accountId).where('enabled', '=', 1)
        .orderBy('created_at').orderBy('id').execute();
    },

    async update(accountId: string, channelId: string, changes: ChannelChanges): Promise<ChannelRow | undefined> {
      return db.updateTable('channels').set(changes).where('account_id', '=', accountId).where('id', '=', channelId)
        .returningAll().executeTakeFirst();
    },

    /** Deletes the channel and, by cascade, its delivery history. */
    async delete(accountId: string, channelId: string): Promise<boolean> {
      const result = await db.deleteFrom('channels').where('account_id', '=', accountId).where('id', '=', channelId).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}

export type ChannelsRepo = ReturnType<typeof channelsRepo>;
