/**
 * Token buckets: the interface both backends implement, and the arithmetic
 * they share. The Redis backend repeats this arithmetic in Lua; the test
 * suite runs the same cases against both, so they cannot drift apart.
 */

export interface Bucket {
  /** Which bucket: `ip:…`, `key:…`, `acct:…`; a backend adds its own prefix. */
  key: string;
  capacity: number;
  refillPerSecond: number;
  /**
   * Keep this bucket's debit when a later bucket of the same take refuses.
   * The per-IP tier sets it: the spec makes a refused request still cost its
   * per-IP token. Every other debit is all-or-nothing.
   */
  chargeOnRefusal?: boolean;
}

export interface TakeResult {
  allowed: boolean;
  /** Seconds until the refusing bucket holds the tokens again, rounded up, at least 1; 0 when allowed. */
  retryAfterSeconds: number;
  /** Index of the bucket that refused; -1 when allowed. */
  refusedAt: number;
}

export interface Limiter {
  /**
   * Checks the buckets in order and takes `cost` tokens from each. The first
   * bucket short of tokens refuses the request; then only the buckets before
   * it with `chargeOnRefusal` are debited. A negative cost gives tokens back
   * (up to the capacity). Atomic: concurrent takes never overdraw a bucket.
   */
  take(buckets: readonly Bucket[], cost: number, nowMs: number): Promise<TakeResult>;
  close(): Promise<void>;
}

export const ALLOWED: TakeResult = Object.freeze({ allowed: true, retryAfterSeconds: 0, refusedAt: -1 });

/**
 * Floating-point slack: a bucket refilled for exactly the advertised
 * Retry-After must count as full enough, even when 36 000 ms × (100 / 3.6e6)
 * comes out a hair below 1.
 */
export const EPSILON = 1e-9;

export interface BucketState {
  tokens: number;
  /** When `tokens` was last computed (ms); refill runs from here. */
  at: number;
}

/** The level of a bucket at `nowMs`: a missing state is a full bucket, and a clock that went back refills nothing. */
export function levelAt(state: BucketState | undefined, bucket: Bucket, nowMs: number): number {
  if (!state) return bucket.capacity;
  const elapsed = Math.max(0, nowMs - state.at);
  return Math.min(bucket.capacity, state.tokens + (elapsed * bucket.refillPerSecond) / 1000);
}

export function hasTokens(level: number, cost: number): boolean {
  return level + EPSILON >= cost;
}

/** Seconds until `cost` tokens are back, rounded up to whole seconds and at least 1: the Retry-After value. */
export function retryAfterSeconds(level: number, cost: number, bucket: Bucket): number {
  const ms = ((cost - level) * 1000) / bucket.refillPerSecond;
  return Math.max(1, Math.ceil(ms / 1000 - EPSILON));
}

/** Milliseconds until a bucket at `level` is full again: after that, forgetting it changes nothing. */
export function msUntilFull(level: number, bucket: Bucket): number {
  return Math.max(0, ((bucket.capacity - level) * 1000) / bucket.refillPerSecond);
}
