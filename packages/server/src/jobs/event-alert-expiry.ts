import { DAY_MS, MINUTE_MS, iso } from '../lib/clock.js';
import { expireEventAlerts } from '../features/alerts/jobs-repo.js';
import type { Store } from '../store/db.js';
import type { Job } from './scheduler.js';

/** Event alerts resolve this long after their last occurrence (spec, Limits: event-type alert TTL). */
export const EVENT_ALERT_TTL_MS = DAY_MS;
export const EXPIRY_BATCH = 500;

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Every minute: active event alerts whose last occurrence is 24 hours old
 * resolve (resolved_by 'ttl') and notify. Batches of 500, one transaction
 * each, with the event loop free between them.
 */
export function eventAlertExpiryJob(store: Pick<Store, 'db' | 'dialect'>, options: { batch?: number } = {}): Job {
  const batch = options.batch ?? EXPIRY_BATCH;
  return {
    name: 'event-alert-expiry',
    intervalMs: MINUTE_MS,
    async run(now) {
      const cutoff = iso(new Date(now.getTime() - EVENT_ALERT_TTL_MS));
      while ((await expireEventAlerts(store, cutoff, now, batch)) === batch) await yieldToEventLoop();
    },
  };
}
