import type { Kysely } from 'kysely';
import { HOUR_MS, iso } from '../lib/clock.js';
import { idempotencyRepo } from '../http/idempotency-repo.js';
import type { Database } from '../store/schema.js';
import type { Job } from './scheduler.js';

/** Idempotency keys are remembered 24 h; rows past that are deleted so the table stays bounded. */
export function idempotencyCleanupJob(db: Kysely<Database>): Job {
  const repo = idempotencyRepo(db);
  return {
    name: 'idempotency-cleanup',
    intervalMs: HOUR_MS,
    async run(now) {
      await repo.deleteExpired(iso(now));
    },
  };
}
