import {
  ALLOWED, hasTokens, levelAt, msUntilFull, retryAfterSeconds, EPSILON,
  type Bucket, type BucketState, type Limiter, type TakeResult,
} from './limiter.js';

interface Entry extends BucketState {
  /** When the bucket is full again; from then on the entry is worth nothing and may go. */
  fullAt: number;
}

export interface MemoryLimiterOptions {
  /**
   * Hard cap on the number of buckets kept. Past it the least recently used
   * bucket is dropped, which resets that client to a full bucket: a
   * flood of distinct addresses costs at most this much memory (about 150
   * bytes a bucket) and can only ever be generous to someone idle.
   */
  maxBuckets?: number;
  /** Entries the idle sweep looks at per take. */
  sweepPerTake?: number;
}

export interface MemoryLimiter extends Limiter {
  /** Buckets currently held: tests show the bound with it. */
  readonly size: number;
}

export const DEFAULT_MAX_BUCKETS = 200_000;

/**
 * The default backend: buckets in one process's memory. The Map's insertion
 * order doubles as recency (a write re-inserts), so eviction takes the first
 * entry. Idle buckets are dropped by a sweep that walks a few entries per
 * take with one long-lived iterator, so no timer runs and no take pays for a
 * full scan.
 */
export function memoryLimiter(options: MemoryLimiterOptions = {}): MemoryLimiter {
  const maxBuckets = options.maxBuckets ?? DEFAULT_MAX_BUCKETS;
  const sweepPerTake = options.sweepPerTake ?? 4;
  const entries = new Map<string, Entry>();
  let sweeper: IterableIterator<[string, Entry]> = entries.entries();

  function write(bucket: Bucket, level: number, cost: number, nowMs: number): void {
    const previous = entries.get(bucket.key);
    const tokens = Math.min(bucket.capacity, level - cost);
    entries.delete(bucket.key);
    if (tokens >= bucket.capacity - EPSILON) return;
    const at = Math.max(nowMs, previous?.at ?? nowMs);
    entries.set(bucket.key, { tokens, at, fullAt: at + msUntilFull(tokens, bucket) });
    if (entries.size > maxBuckets) {
      const oldest = entries.keys().next();
      if (!oldest.done) entries.delete(oldest.value);
    }
  }

  function sweep(nowMs: number): void {
    for (let i = 0; i < sweepPerTake; i++) {
      const next = sweeper.next();
      if (next.done) {
        sweeper = entries.entries();
        return;
      }
      const [key, entry] = next.value;
      if (entry.fullAt <= nowMs) entries.delete(key);
    }
  }

  function takeNow(buckets: readonly Bucket[], cost: number, nowMs: number): TakeResult {
    const levels: number[] = [];
    let refusedAt = -1;
    for (let i = 0; i < buckets.length; i++) {
      const level = levelAt(entries.get(buckets[i]!.key), buckets[i]!, nowMs);
      levels.push(level);
      if (!hasTokens(level, cost)) {
        refusedAt = i;
        break;
      }
    }
    if (refusedAt === -1) {
      for (let i = 0; i < buckets.length; i++) write(buckets[i]!, levels[i]!, cost, nowMs);
    } else {
      for (let i = 0; i < refusedAt; i++) if (buckets[i]!.chargeOnRefusal) write(buckets[i]!, levels[i]!, cost, nowMs);
    }
    sweep(nowMs);
    if (refusedAt === -1) return ALLOWED;
    return { allowed: false, retryAfterSeconds: retryAfterSeconds(levels[refusedAt]!, cost, buckets[refusedAt]!), refusedAt };
  }

  return {
    get size() {
      return entries.size;
    },
    take: async (buckets, cost, nowMs) => takeNow(buckets, cost, nowMs),
    async close() {
      entries.clear();
    },
  };
}
