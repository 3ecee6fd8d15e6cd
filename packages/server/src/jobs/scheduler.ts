import type { Logger } from 'pino';
import type { Clock } from '../lib/clock.js';
import { isStoreUnavailable } from '../store/errors.js';

/** A background task of the service process. `run` gets the time from the injected clock. */
export interface Job {
  name: string;
  intervalMs: number;
  run(now: Date): Promise<void>;
}

export interface Scheduler {
  /** Stops scheduling and waits for runs in progress. */
  stop(): Promise<void>;
}

/**
 * Runs each job every `intervalMs`, never two runs of one job at once. A
 * failing run is logged and retried at the next tick. Tests call `job.run`
 * with a fake clock instead of starting timers.
 */
export function startScheduler(jobs: Job[], deps: { clock: Clock; logger: Logger }): Scheduler {
  const running = new Map<string, Promise<void>>();
  const timers = jobs.map((job) => {
    const tick = () => {
      if (running.has(job.name)) return;
      const run = job.run(deps.clock.now())
        .catch((err: unknown) => {
          // A store outage ends by itself: a warning, and the next tick runs as usual.
          if (isStoreUnavailable(err)) deps.logger.warn({ err, job: job.name }, 'background job failed: store unavailable; retried at the next tick');
          else deps.logger.error({ err, job: job.name }, 'background job failed');
        })
        .finally(() => running.delete(job.name));
      running.set(job.name, run);
    };
    const timer = setInterval(tick, job.intervalMs);
    timer.unref();
    return timer;
  });
  return {
    async stop() {
      for (const timer of timers) clearInterval(timer);
      await Promise.allSettled([...running.values()]);
    },
  };
}
