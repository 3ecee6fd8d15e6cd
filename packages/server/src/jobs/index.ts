import type { Config } from '../config.js';
import { deliveryWorkerJob } from '../notify/worker.js';
import type { Store } from '../store/db.js';
import { eventAlertExpiryJob } from './event-alert-expiry.js';
import { idempotencyCleanupJob } from './idempotency-cleanup.js';
import { metricsRetentionJob } from './metrics-retention.js';
import { metricsRollupJob } from './metrics-rollup.js';
import type { Job } from './scheduler.js';
import { unreachableWatchdogJob } from './unreachable-watchdog.js';

/** Every background job of the service process. */
export function serviceJobs(store: Store, config: Config): Job[] {
  return [idempotencyCleanupJob(store.db), metricsRollupJob(store), metricsRetentionJob(store, config.retention), eventAlertExpiryJob(store), unreachableWatchdogJob(store), deliveryWorkerJob(store, config)];
}
