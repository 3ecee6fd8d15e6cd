import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';
import { isStoreUnavailable } from './errors.js';

export type TransactionWork<T> = (tx: Transaction<Database>) => Promise<T>;

interface Job {
  work: TransactionWork<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** How many units of work share one commit at most. */
export const GROUP_COMMIT_MAX = 64;

/**
 * Group commit for SQLite, which has one writer: units of work submitted
 * while a transaction is being prepared or run share the next one, so the
 * commit (a WAL append of every dirty page) is paid once per group instead
 * of once per request. Each unit still sees its own writes in order. If any
 * unit fails, the group is rolled back and every unit re-run alone, so only
 * the failing one fails; unless the store itself is unavailable, which
 * fails every unit of the group at once.
 */
export function groupCommit(db: Kysely<Database>) {
  let queue: Job[] = [];
  let scheduled = false;

  const alone = (job: Job) => db.transaction().execute(job.work).then(job.resolve, job.reject);

  async function flush(): Promise<void> {
    scheduled = false;
    const group = queue.slice(0, GROUP_COMMIT_MAX);
    queue = queue.slice(GROUP_COMMIT_MAX);
    if (queue.length > 0) schedule();
    if (group.length === 1) return alone(group[0]!);
    let results: unknown[];
    try {
      results = await db.transaction().execute(async (tx) => {
        const out: unknown[] = [];
        for (const job of group) out.push(await job.work(tx));
        return out;
      });
    } catch (error) {
      // The store is unavailable (the lock held elsewhere beyond the busy
      // timeout): each unit alone would meet it again after a wait of its
      // own, with the event loop blocked for each. They all fail with it.
      if (isStoreUnavailable(error)) {
        for (const job of group) job.reject(error);
        return;
      }
      await Promise.all(group.map(alone));
      return;
    }
    group.forEach((job, i) => job.resolve(results[i]));
  }

  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => void flush());
  }

  return {
    run<T>(work: TransactionWork<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
        schedule();
      });
    },
  };
}
