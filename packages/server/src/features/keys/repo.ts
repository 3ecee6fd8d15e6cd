import type { Kysely, Selectable } from 'kysely';
import type { AccountKeysTable, Database } from '../../store/schema.js';

export type AccountKeyRow = Selectable<AccountKeysTable>;

export function keysRepo(db: Kysely<Database>) {
  return {
    async insert(row: AccountKeyRow): Promise<void> {
      await db.insertInto('account_keys').values(row).execute();
    },

    /** The key a secret hashes to, unless revoked or expired: one indexed lookup, no scan. */
    findLiveByHash(secretHash: string, now: string): Promise<AccountKeyRow | undefined> {
      return db.selectFrom('account_keys').selectAll()
        .where('secret_hash', '=', secretHash)
        .where('revoked_at', 'is', null)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
        .executeTakeFirst();
    },

    listLive(accountId: string): Promise<AccountKeyRow[]> {
      return db.selectFrom('account_keys').selectAll()
        .where('account_id', '=', accountId).where('revoked_at', 'is', null)
        .orderBy('created_at', 'desc').orderBy('id', 'desc')
        .execute();
    },

    async revoke(accountId: string, keyId: string, now: string): Promise<boolean> {
      const result = await db.updateTable('account_keys').set({ revoked_at: now })
        .where('id', '=', keyId).where('account_id', '=', accountId).where('revoked_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async touch(keyId: string, now: string): Promise<void> {
      await db.updateTable('account_keys').set({ last_used_at: now }).where('id', '=', keyId).execute();
    },

    async setReauthUntil(keyId: string, until: string): Promise<void> {
      await db.updateTable('account_keys').set({ reauth_until: until }).where('id', '=', keyId).execute();
    },

    async reauthUntil(keyId: string): Promise<string | null> {
      const row = await db.selectFrom('account_keys').select('reauth_until').where('id', '=', keyId).executeTakeFirst();
      return row?.reauth_until ?? null;
    },
  };
}

export type KeysRepo = ReturnType<typeof keysRepo>;
