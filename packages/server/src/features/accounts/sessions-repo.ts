import type { Kysely, Selectable } from 'kysely';
import type { Database, SessionsTable } from '../../store/schema.js';

export type SessionRow = Selectable<SessionsTable>;

export interface NewSession {
  id: string;
  userId: string;
  accountId: string;
  createdAt: string;
  expiresAt: string;
}

/** Stores a new session through `db` or, for a caller that writes more in one go, its transaction. */
export async function insertSession(db: Kysely<Database>, session: NewSession): Promise<void> {
  await db.insertInto('sessions').values({
    id: session.id, user_id: session.userId, account_id: session.accountId,
    created_at: session.createdAt, expires_at: session.expiresAt, revoked_at: null, reauth_until: null,
  }).execute();
}

export function sessionsRepo(db: Kysely<Database>) {
  return {
    insert: (session: NewSession): Promise<void> => insertSession(db, session),

    findLive(sessionId: string, now: string): Promise<SessionRow | undefined> {
      return db.selectFrom('sessions').selectAll()
        .where('id', '=', sessionId).where('revoked_at', 'is', null).where('expires_at', '>', now)
        .executeTakeFirst();
    },

    async revoke(sessionId: string, now: string): Promise<void> {
      await db.updateTable('sessions').set({ revoked_at: now }).where('id', '=', sessionId).where('revoked_at', 'is', null).execute();
    },

    async setReauthUntil(sessionId: string, until: string): Promise<void> {
      await db.updateTable('sessions').set({ reauth_until: until }).where('id', '=', sessionId).execute();
    },
  };
}

export type SessionsRepo = ReturnType<typeof sessionsRepo>;
