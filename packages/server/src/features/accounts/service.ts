import type { Static } from '@sinclair/typebox';
import type { Logger } from 'pino';
import { DAY_MS, addMs, iso, type Clock } from '../../lib/clock.js';
import { sha256Hex } from '../../lib/crypto.js';
import { newId, newOpaqueToken } from '../../lib/ids.js';
import type { Mailer } from '../../lib/mailer.js';
import { burnPasswordCheck, hashPassword, prepareDummyHash, verifyPassword } from '../../lib/passwords.js';
import type { Principal } from '../../http/auth.js';
import type { PasswordAttempts } from '../../http/rate-limit/password-attempts.js';
import { ApiError, notFound, validationFailed } from '../../http/errors.js';
import { escapeHtml } from '../../notify/text.js';
import { isUniqueViolation } from '../../store/errors.js';
import type { AccountsRepo, UserRow } from './repo.js';
import type { SessionsRepo } from './sessions-repo.js';
import type { SessionTokens } from './sessions.js';
import type { LoginBody, RegisterBody } from './schemas.js';

export const VERIFICATION_TTL_MS = DAY_MS;

// Deliberately plain: an ASCII local part and a dotted domain. Internationalised
// domains are accepted in their punycode form.
export const EMAIL = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@(?=.{4,253}$)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/;

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function userView(user: UserRow) {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    verified: user.verified === 1,
    role: user.role,
    created_at: user.created_at,
  };
}

export function accountsService(deps: {
  repo: AccountsRepo;
  sessions: SessionsRepo;
  tokens: SessionTokens;
  clock: Clock;
  mailer: Mailer;
  log: Logger;
  /** The failed-password budget per e-mail address. */
  passwords: PasswordAttempts;
}) {
  const { repo, tokens, clock } = deps;
  prepareDummyHash();

  function sendVerification(email: string, origin: string, token: string): void {
    const link = `${origin}/verify-email?token=${encodeURIComponent(token)}`;
    const text = [
      'Welcome to Kiln.',
      '',
      `Confirm your e-mail address by opening this link within 24 hours:`,
      link,
      '',
      'If you did not create this account, ignore this message.',
    ].join('\n');
    // Without PUBLIC_URL the origin is the request's Host header, which a client chooses: escaped like any text.
    const href = escapeHtml(link);
    const html = `<p>Welcome to Kiln.</p><p>Confirm your e-mail address by opening this link within 24 hours:</p><p><a href="${href}">${href}</a></p><p>If you did not create this account, ignore this message.</p>`;
    // Registration succeeds even when the mail server is down; the failure is logged.
    deps.mailer.send({ to: email, subject: 'Confirm your e-mail address for Kiln', text, html }).catch((err: unknown) => {
      deps.log.warn({ err, to: email }, 'verification e-mail not sent');
    });
  }

  return {
    async register(body: Static<typeof RegisterBody>, origin: string) {
      const email = body.email.trim();
      if (!EMAIL.test(email)) throw validationFailed('/email', 'must be an e-mail address');
      const now = clock.now();
      const user = {
        id: newId('usr'),
        accountId: newId('acc'),
        email,
        emailNormalized: normalizeEmail(email),
        name: body.name?.trim() || email.split('@')[0]!,
        passwordHash: await hashPassword(body.password),
        now: iso(now),
      };
      const verificationToken = newOpaqueToken();
      const { session, token } = await tokens.mint({ id: user.id, account_id: user.accountId });
      try {
        await repo.createAccountWithOwner(user, {
          tokenHash: sha256Hex(verificationToken),
          expiresAt: iso(addMs(now, VERIFICATION_TTL_MS)),
        }, session);
      } catch (err) {
        if (isUniqueViolation(err)) throw new ApiError('email_taken', 'an account with this e-mail address already exists');
        throw err;
      }
      sendVerification(email, origin, verificationToken);
      return {
        user: { id: user.id, email, name: user.name, verified: false, created_at: user.now },
        token,
      };
    },

    /**
     * Same answer and the same work whether the e-mail is unknown or the
     * password wrong; once the address has spent its failed attempts, the
     * same 429 for both.
     */
    async login(body: Static<typeof LoginBody>) {
      const email = normalizeEmail(body.email);
      let user: UserRow | undefined;
      const ok = await deps.passwords.guard(email, async () => {
        user = await repo.findUserByEmail(email);
        return user ? verifyPassword(user.password_hash, body.password) : burnPasswordCheck(body.password);
      });
      if (!user || !ok) throw new ApiError('invalid_credentials', 'the e-mail address or the password is wrong');
      const { token, expiresAt } = await tokens.issue(user);
      return { token, expires_at: expiresAt };
    },

    /** Revokes the session behind the token. An account key is not a session; revoke it under /account/keys. */
    async logout(principal: Principal): Promise<void> {
      if (principal.kind === 'session') await deps.sessions.revoke(principal.credentialId, iso(clock.now()));
    },

    async me(principal: Principal) {
      const user = await repo.findUser(principal.accountId, principal.userId);
      if (!user) throw notFound('user');
      const [serversCount, plan] = await Promise.all([repo.countServers(principal.accountId), repo.planOf(principal.accountId)]);
      return { ...userView(user), servers_count: serversCount, plan };
    },

    async verifyEmail(token: string) {
      const userId = await repo.consumeVerification(sha256Hex(token), iso(clock.now()));
      if (!userId) {
        throw new ApiError('invalid_verification_token', 'the verification token is unknown, already used, or expired');
      }
      const user = await repo.findUserById(userId);
      if (!user) throw notFound('user');
      return { success: true as const, user: userView(user) };
    },
  };
}

export type AccountsService = ReturnType<typeof accountsService>;
