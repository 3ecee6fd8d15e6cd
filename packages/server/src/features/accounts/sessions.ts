import { SignJWT, jwtVerify } from 'jose';
import { DAY_MS, addMs, iso, type Clock } from '../../lib/clock.js';
import { deriveKey } from '../../lib/crypto.js';
import { newId } from '../../lib/ids.js';
import type { NewSession, SessionsRepo } from './sessions-repo.js';

export const SESSION_TTL_MS = 7 * DAY_MS;
const ISSUER = 'kiln';

/**
 * Session tokens are JWTs (HS256) carrying the user and a session id. The
 * session row makes logout take effect at once: a revoked id fails even
 * while the signature is still valid.
 */
export function sessionTokens(deps: { secretKey: string; clock: Clock; repo: SessionsRepo }) {
  const key = deriveKey(deps.secretKey, 'session-jwt');

  /** A new session's row and its signed token; the token works once the row is stored. */
  async function mint(user: { id: string; account_id: string }): Promise<{ session: NewSession; token: string; expiresAt: string }> {
    const now = deps.clock.now();
    const expires = addMs(now, SESSION_TTL_MS);
    const session: NewSession = { id: newId('ses'), userId: user.id, accountId: user.account_id, createdAt: iso(now), expiresAt: iso(expires) };
    const token = await new SignJWT({ sid: session.id })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(ISSUER)
      .setSubject(user.id)
      .setIssuedAt(Math.floor(now.getTime() / 1000))
      .setExpirationTime(Math.floor(expires.getTime() / 1000))
      .sign(key);
    return { session, token, expiresAt: iso(expires) };
  }

  return {
    /**
     * Without storing it: for registration, which stores the session in the
     * transaction that creates the account, so a failure leaves neither.
     */
    mint,

    async issue(user: { id: string; account_id: string }): Promise<{ token: string; expiresAt: string }> {
      const { session, token, expiresAt } = await mint(user);
      await deps.repo.insert(session);
      return { token, expiresAt };
    },

    /** The live session a token names, or null. */
    async verify(token: string) {
      const now = deps.clock.now();
      let sessionId: unknown;
      let userId: unknown;
      try {
        const { payload } = await jwtVerify(token, key, { issuer: ISSUER, algorithms: ['HS256'], currentDate: now });
        sessionId = payload.sid;
        userId = payload.sub;
      } catch {
        return null;
      }
      if (typeof sessionId !== 'string' || typeof userId !== 'string') return null;
      const session = await deps.repo.findLive(sessionId, iso(now));
      return session && session.user_id === userId ? session : null;
    },
  };
}

export type SessionTokens = ReturnType<typeof sessionTokens>;
