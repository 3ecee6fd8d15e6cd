import type { Store } from '../store/db.js';
import { idempotencyCleanupJob } from './idempotency-cleanup.js';
import type { Job } from './scheduler.js';

/** Every background job of the service process. */
export function serviceJobs(store: Store): Job[] {
  return [idempotencyCleanupJob(store.db)];
}
