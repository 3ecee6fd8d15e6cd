import type { Clock } from '../../lib/clock.js';
import type { Limiter } from './limiter.js';
import { rateLimited } from './request-limits.js';
import { bucketsFor, type Tiers } from './tiers.js';

/**
 * The failed-password budget of one e-mail address (10 per 15 minutes by
 * default), shared by login and re-authentication and, through the limiter,
 * by every process on one Redis.
 *
 * A token is taken *before* the password is checked and given back when it
 * was right: counting only after a failure would let a burst of concurrent
 * guesses all pass the check first. Unknown addresses have buckets like known
 * ones, so the 429 says nothing about whether an account exists, and a
 * spent budget is refused before any password hashing is done.
 */
export function passwordAttempts(deps: { limiter: Limiter; clock: Clock; tiers: Tiers }) {
  const { limiter, clock } = deps;
  const buckets = bucketsFor(deps.tiers);

  return {
    /** Runs `check` unless the address is out of attempts (429 rate_limited); true when the password was right. */
    async guard(normalizedEmail: string, check: () => Promise<boolean>): Promise<boolean> {
      const bucket = buckets.password(normalizedEmail);
      const taken = await limiter.take([bucket], 1, clock.now().getTime());
      if (!taken.allowed) {
        throw rateLimited(taken.retryAfterSeconds, 'too many failed password attempts for this e-mail address; wait retry_after_seconds and try again');
      }
      const ok = await check();
      if (ok) await limiter.take([bucket], -1, clock.now().getTime());
      return ok;
    },
  };
}

export type PasswordAttempts = ReturnType<typeof passwordAttempts>;
