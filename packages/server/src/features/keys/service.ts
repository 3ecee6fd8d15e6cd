import type { Static } from '@sinclair/typebox';
import { MINUTE_MS, addMs, iso, type Clock } from '../../lib/clock.js';
import { sha256Hex } from '../../lib/crypto.js';
import { newAccountKeySecret, newId } from '../../lib/ids.js';
import { verifyPassword } from '../../lib/passwords.js';
import { expandScopes, type Principal } from '../../http/auth.js';
import type { PasswordAttempts } from '../../http/rate-limit/password-attempts.js';
import { ApiError, notFound, validationFailed } from '../../http/errors.js';
import type { Capability, Scope } from '../../http/route-config.js';
import type { AccountsRepo } from '../accounts/repo.js';
import type { SessionsRepo } from '../accounts/sessions-repo.js';
import type { AccountKeyRow, KeysRepo } from './repo.js';
import type { CreateKeyBody } from './schemas.js';

/** How long a password re-authentication lets its credential purge. */
export const REAUTH_TTL_MS = 5 * MINUTE_MS;
/** last_used_at is written at most this often per key, so reads stay reads. */
const TOUCH_INTERVAL_MS = MINUTE_MS;

export function keyView(row: AccountKeyRow) {
  return {
    id: row.id,
    name: row.name,
    scopes: JSON.parse(row.scopes) as Scope[],
    capabilities: JSON.parse(row.capabilities) as Capability[],
    prefix: row.prefix,
    created_at: row.created_at,
    expires_at: row.expires_at,
    last_used_at: row.last_used_at,
  };
}

export function keysService(deps: {
  keys: KeysRepo;
  accounts: AccountsRepo;
  sessions: SessionsRepo;
  clock: Clock;
  /** Re-authentication draws on the same failed-password budget as login. */
  passwords: PasswordAttempts;
}) {
  const { keys, clock } = deps;

  return {
    async create(principal: Principal, body: Static<typeof CreateKeyBody>) {
      const capabilities = body.capabilities ?? [];
      // A key can only hand out what it holds itself, so no key can mint a stronger one.
      for (const scope of body.scopes) {
        if (!principal.scopes.has(scope)) throw new ApiError('insufficient_scope', `a key cannot grant the ${scope} scope it does not hold`);
      }
      if (principal.kind === 'account_key') {
        for (const capability of capabilities) {
          if (!principal.capabilities.has(capability)) {
            throw new ApiError('missing_capability', `a key cannot grant the ${capability} capability it does not hold`);
          }
        }
      }
      const now = clock.now();
      if (body.expires_at && new Date(body.expires_at).getTime() <= now.getTime()) {
        throw validationFailed('/expires_at', 'must be in the future', body.expires_at);
      }
      const secret = newAccountKeySecret();
      const row: AccountKeyRow = {
        id: newId('key'),
        account_id: principal.accountId,
        user_id: principal.userId,
        name: body.name.trim() || body.name,
        prefix: secret.slice(0, 11),
        secret_hash: sha256Hex(secret),
        scopes: JSON.stringify([...body.scopes].sort()),
        capabilities: JSON.stringify(capabilities),
        created_at: iso(now),
        expires_at: body.expires_at ? iso(new Date(body.expires_at)) : null,
        last_used_at: null,
        revoked_at: null,
        reauth_until: null,
      };
      await keys.insert(row);
      return { key: keyView(row), secret };
    },

    async list(accountId: string) {
      return { keys: (await keys.listLive(accountId)).map(keyView) };
    },

    async revoke(accountId: string, keyId: string): Promise<void> {
      if (!(await keys.revoke(accountId, keyId, iso(clock.now())))) throw notFound('account key');
    },

    /** Confirms the password and lets this one credential perform guarded actions for 5 minutes. */
    async verifyPassword(principal: Principal, password: string) {
      const user = await deps.accounts.findUser(principal.accountId, principal.userId);
      if (!user || !(await deps.passwords.guard(user.email_normalized, () => verifyPassword(user.password_hash, password)))) {
        throw new ApiError('invalid_credentials', 'the password is wrong');
      }
      const until = iso(addMs(clock.now(), REAUTH_TTL_MS));
      if (principal.kind === 'account_key') await keys.setReauthUntil(principal.credentialId, until);
      else await deps.sessions.setReauthUntil(principal.credentialId, until);
      return { success: true as const, verified_until: until };
    },

    /** True when the credential re-authenticated within the last 5 minutes. */
    async recentlyReauthenticated(principal: Principal): Promise<boolean> {
      if (principal.kind !== 'account_key') return false;
      const until = await keys.reauthUntil(principal.credentialId);
      return until !== null && until > iso(clock.now());
    },

    /** Resolves an `mk_` secret to its principal. */
    async authenticate(secret: string): Promise<Principal | null> {
      const now = clock.now();
      const row = await keys.findLiveByHash(sha256Hex(secret), iso(now));
      if (!row) return null;
      if (!row.last_used_at || new Date(row.last_used_at).getTime() + TOUCH_INTERVAL_MS <= now.getTime()) {
        await keys.touch(row.id, iso(now));
      }
      return {
        accountId: row.account_id,
        userId: row.user_id,
        kind: 'account_key',
        credentialId: row.id,
        scopes: expandScopes(JSON.parse(row.scopes) as Scope[]),
        capabilities: new Set(JSON.parse(row.capabilities) as Capability[]),
      };
    },
  };
}

export type KeysService = ReturnType<typeof keysService>;
