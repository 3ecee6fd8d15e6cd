import type { Kysely, Selectable } from 'kysely';
import type { Database, UsersTable } from '../../store/schema.js';
import { insertSession, type NewSession } from './sessions-repo.js';

export type UserRow = Selectable<UsersTable>;

export function accountsRepo(db: Kysely<Database>) {
  return {
    async createAccountWithOwner(user: {
      id: string; accountId: string; email: string; emailNormalized: string; name: string; passwordHash: string; now: string;
    }, verification: { tokenHash: string; expiresAt: string }, session: NewSession): Promise<void> {
      // One transaction: a registration that fails half-way (the store going away) leaves no account behind to block a retry with email_taken.
      await db.transaction().execute(async (tx) => {
        await tx.insertInto('accounts').values({ id: user.accountId, created_at: user.now }).execute();
        await tx.insertInto('users').values({
          id: user.id, account_id: user.accountId, email: user.email, email_normalized: user.emailNormalized,
          name: user.name, password_hash: user.passwordHash, verified: 0, role: 'owner', created_at: user.now,
        }).execute();
        await tx.insertInto('email_verifications').values({
          token_hash: verification.tokenHash, user_id: user.id, created_at: user.now, expires_at: verification.expiresAt, used_at: null,
        }).execute();
        await insertSession(tx, session);
      });
    },

    findUserByEmail(emailNormalized: string): Promise<UserRow | undefined> {
      return db.selectFrom('users').selectAll().where('email_normalized', '=', emailNormalized).executeTakeFirst();
    },

    findUser(accountId: string, userId: string): Promise<UserRow | undefined> {
      return db.selectFrom('users').selectAll().where('id', '=', userId).where('account_id', '=', accountId).executeTakeFirst();
    },

    /** Marks the token used and the user verified, once; false when the token is unknown, used or expired. */
    async consumeVerification(tokenHash: string, now: string): Promise<string | null> {
      return db.transaction().execute(async (tx) => {
        const row = await tx.updateTable('email_verifications')
          .set({ used_at: now })
          .where('token_hash', '=', tokenHash)
          .where('used_at', 'is', null)
          .where('expires_at', '>', now)
          .returning('user_id')
          .executeTakeFirst();
        if (!row) return null;
        await tx.updateTable('users').set({ verified: 1 }).where('id', '=', row.user_id).execute();
        return row.user_id;
      });
    },

    findUserById(userId: string): Promise<UserRow | undefined> {
      return db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst();
    },

    /** `free` unless the account carries a residual legacy subscription. */
    async planOf(accountId: string): Promise<string> {
      const row = await db.selectFrom('legacy_subscriptions').select('plan').where('account_id', '=', accountId).executeTakeFirst();
      return row?.plan ?? 'free';
    },

    async countServers(accountId: string): Promise<number> {
      const row = await db.selectFrom('servers').select((eb) => eb.fn.countAll<number>().as('n'))
        .where('account_id', '=', accountId).where('trashed_at', 'is', null).executeTakeFirstOrThrow();
      return Number(row.n);
    },
  };
}

export type AccountsRepo = ReturnType<typeof accountsRepo>;
