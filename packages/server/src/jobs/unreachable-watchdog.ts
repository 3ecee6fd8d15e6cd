import { MINUTE_MS } from '../lib/clock.js';
import { raiseUnreachable } from '../features/alerts/jobs-repo.js';
import type { Store } from '../store/db.js';
import type { Job } from './scheduler.js';

export const WATCHDOG_BATCH = 500;

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Every minute: raises server_unreachable for servers that have not
 * reported for 3 push intervals (or for 20 minutes since registration when
 * they never did). Each push moves the server's deadline
 * (servers.unreachable_at_ms, indexed), so a run reads only servers that are
 * overdue and not yet alerted. The next snapshot resolves the alert.
 */
export function unreachableWatchdogJob(store: Pick<Store, 'db' | 'dialect'>, options: { batch?: number } = {}): Job {
  const batch = options.batch ?? WATCHDOG_BATCH;
  return {
    name: 'unreachable-watchdog',
    intervalMs: MINUTE_MS,
    async run(now) {
      while ((await raiseUnreachable(store, now, batch)) === batch) await yieldToEventLoop();
    },
  };
}
