import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.js';
import { idempotencyRepo, type ClaimRef, type IdempotencyRow } from './idempotency-repo.js';

export type { ClaimRef, IdempotencyRow };

/**
 * What claiming a key found: it is ours now (it was unused, its 24 hours
 * were over, or the lock of a request that never answered had run out); or
 * another claim holds it, as `entry`; or it kept changing under us.
 */
export type ClaimAttempt =
  | { kind: 'claimed' }
  | { kind: 'held'; entry: IdempotencyRow }
  | { kind: 'contended' };

/**
 * Where Idempotency-Keys are remembered: the store (default), or Redis when
 * REDIS_URL is set (idempotency-redis.ts). Both decide with the times in the
 * rows they are given (the service clock), never with their own, so they
 * answer alike. Responses arrive sealed (idempotency.ts) and are kept as
 * given; a store never sees them in the clear.
 */
export interface IdempotencyStore {
  /**
   * Takes the key for `row` (state in_flight) unless a live claim or answer
   * holds it; atomic. `complete` and `release` are given that same `row`
   * object back, and `discard` the very `entry` returned here.
   */
  claim(row: IdempotencyRow): Promise<ClaimAttempt>;
  /** Stores the sealed response of a claim still held; a claim taken over meanwhile is left to its new holder. */
  complete(claim: ClaimRef, statusCode: number, sealedResponse: string): Promise<void>;
  /** Frees the key of a claim still held, for a retry (5xx, 429). */
  release(claim: ClaimRef): Promise<void>;
  /** Drops a finished entry that can no longer be replayed, unless it changed since it was read. */
  discard(entry: ClaimRef): Promise<void>;
}

/** A key is free for a new claim when its 24 hours are over, or when its holder stopped before answering (lock run out). */
export function isFree(entry: Pick<IdempotencyRow, 'state' | 'locked_until' | 'expires_at'>, now: string): boolean {
  return entry.expires_at <= now || (entry.state === 'in_flight' && entry.locked_until <= now);
}

const CLAIM_ATTEMPTS = 3;

/** The idempotency_keys table. */
export function sqlIdempotencyStore(db: Kysely<Database>): IdempotencyStore {
  const repo = idempotencyRepo(db);
  return {
    async claim(row) {
      // Each step is atomic on its own; a retry covers a row that changed between two of them.
      for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
        if (await repo.insertClaim(row)) return { kind: 'claimed' };
        const existing = await repo.find(row.account_id, row.idem_key);
        if (!existing) continue;
        if (!isFree(existing, row.created_at)) return { kind: 'held', entry: existing };
        if (await repo.takeOver(row, row.created_at)) return { kind: 'claimed' };
      }
      return { kind: 'contended' };
    },
    complete: (claim, statusCode, sealedResponse) => repo.complete(claim, statusCode, sealedResponse),
    release: (claim) => repo.release(claim),
    discard: (entry) => repo.discard(entry),
  };
}
