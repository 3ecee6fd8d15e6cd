import { sha256Hex } from '../../lib/crypto.js';
import type { Bucket } from './limiter.js';

export interface Tier {
  capacity: number;
  refillPerSecond: number;
}

/** Sub-limits a route declares with `config: { rateLimit: … }`; counted per account after authentication. */
export const ROUTE_LIMITS = ['server-create', 'server-delete', 'server-rotate-key', 'server-purge'] as const;
export type RouteLimit = (typeof ROUTE_LIMITS)[number];

export const TIER_NAMES = ['ip', 'key', 'account', ...ROUTE_LIMITS, 'password'] as const;
export type TierName = (typeof TIER_NAMES)[number];
export type Tiers = Record<TierName, Tier>;

const HOUR = 3600;

/** The spec's Limits table, plus the failed-password budget (10 per 15 minutes per e-mail). */
export const DEFAULT_TIERS: Readonly<Tiers> = Object.freeze({
  ip: { capacity: 100, refillPerSecond: 10 },
  key: { capacity: 1000, refillPerSecond: 100 },
  account: { capacity: 5000, refillPerSecond: 500 },
  'server-create': { capacity: 100, refillPerSecond: 100 / HOUR },
  'server-delete': { capacity: 100, refillPerSecond: 100 / HOUR },
  'server-rotate-key': { capacity: 10, refillPerSecond: 10 / HOUR },
  'server-purge': { capacity: 100, refillPerSecond: 100 / HOUR },
  password: { capacity: 10, refillPerSecond: 10 / (15 * 60) },
});

const UNITS: Record<string, number> = { s: 1, min: 60, h: HOUR };

/**
 * `RATE_LIMITS`: comma-separated `tier:capacity:refill/unit` overrides, unit
 * `s`, `min` or `h` (`server-create:40000:1000/s,password:5:5/h`). Tiers not
 * named keep the spec's values. Throws with a message naming the bad entry.
 */
export function parseTierOverrides(text: string | null): Tiers {
  const tiers: Tiers = { ...DEFAULT_TIERS };
  if (!text) return tiers;
  for (const entry of text.split(',').map((e) => e.trim()).filter(Boolean)) {
    const match = /^([a-z-]+):(\d+(?:\.\d+)?):(\d+(?:\.\d+)?)\/(s|min|h)$/.exec(entry);
    const name = match?.[1] as TierName | undefined;
    if (!match || !name || !TIER_NAMES.includes(name)) {
      throw new Error(`"${entry}" is not tier:capacity:refill/unit with a tier of ${TIER_NAMES.join(', ')} and a unit of s, min, h`);
    }
    const capacity = Number(match[2]);
    const refillPerSecond = Number(match[3]) / UNITS[match[4]!]!;
    if (capacity < 1 || refillPerSecond <= 0) throw new Error(`"${entry}": capacity must be at least 1 and refill above 0`);
    tiers[name] = { capacity, refillPerSecond };
  }
  return tiers;
}

/** The bucket keys of every tier, in one place so both backends and the tests agree on them. */
export function bucketsFor(tiers: Tiers) {
  return {
    /** Keeps its debit when a later tier refuses: the spec charges the per-IP token of every request. */
    ip: (clientId: string): Bucket => ({ key: `ip:${clientId}`, ...tiers.ip, chargeOnRefusal: true }),
    /** Collector keys are named by a digest: buckets must not hold secrets. */
    collectorKey: (token: string): Bucket => ({ key: `col:${sha256Hex(token).slice(0, 32)}`, ...tiers.key }),
    credential: (credentialId: string): Bucket => ({ key: `key:${credentialId}`, ...tiers.key }),
    account: (accountId: string): Bucket => ({ key: `acct:${accountId}`, ...tiers.account }),
    route: (limit: RouteLimit, accountId: string): Bucket => ({ key: `${limit}:${accountId}`, ...tiers[limit] }),
    /** One budget per password: login (by e-mail) and re-authentication (by the user's e-mail) share it. */
    password: (normalizedEmail: string): Bucket => ({ key: `pw:${sha256Hex(normalizedEmail).slice(0, 32)}`, ...tiers.password }),
  };
}

export type BucketsFor = ReturnType<typeof bucketsFor>;
