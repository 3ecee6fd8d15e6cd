import type { Store } from '../../src/store/db.js';
import { idempotencyRedisKey } from '../../src/http/idempotency-redis.js';
import { SKIP_REDIS, type TestRedis } from './limiters.js';

/** Where idempotency keys and the ingest gate live: the store (no REDIS_URL) or Redis. */
export const SHARED_BACKENDS: { name: 'store' | 'redis'; redis: boolean; skip: string | false }[] = [
  { name: 'store', redis: false, skip: false },
  { name: 'redis', redis: true, skip: SKIP_REDIS },
];

export interface RawEntry {
  state: string;
  status_code: number | null;
  /** As stored: sealed. */
  response_body: string | null;
}

interface Backend {
  store: Store;
  redis: TestRedis | null;
}

const idemKeyOf = (redis: TestRedis, accountId: string, idemKey: string) => idempotencyRedisKey(`${redis.prefix}idem:`, accountId, idemKey);

/** An idempotency entry exactly as its backend holds it (the table's row or the Redis hash), or undefined. */
export async function rawIdempotencyEntry(b: Backend, accountId: string, idemKey: string): Promise<RawEntry | undefined> {
  if (!b.redis) {
    return b.store.db.selectFrom('idempotency_keys').select(['state', 'status_code', 'response_body'])
      .where('account_id', '=', accountId).where('idem_key', '=', idemKey).executeTakeFirst();
  }
  const hash = await b.redis.redis.hgetall(idemKeyOf(b.redis, accountId, idemKey));
  if (!hash.state) return undefined;
  return { state: hash.state, status_code: hash.status ? Number(hash.status) : null, response_body: hash.body ?? null };
}

/** Replaces a finished entry's sealed response, as if it had been sealed under another secret. */
export async function corruptIdempotencyEntry(b: Backend, accountId: string, idemKey: string): Promise<void> {
  const garbage = 'v1.garbage.garbage.garbage';
  if (!b.redis) {
    await b.store.db.updateTable('idempotency_keys').set({ response_body: garbage })
      .where('account_id', '=', accountId).where('idem_key', '=', idemKey).execute();
    return;
  }
  const key = idemKeyOf(b.redis, accountId, idemKey);
  if (!(await b.redis.redis.exists(key))) throw new Error(`no entry ${key}`);
  await b.redis.redis.hset(key, 'body', garbage);
}

/** Rows of the store's idempotency table: with Redis holding the keys, none should appear. */
export async function idempotencyRows(store: Store): Promise<number> {
  return (await store.db.selectFrom('idempotency_keys').select('idem_key').execute()).length;
}
