import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { channelConfigSealer } from '../features/channels/sealed-config.js';
import { addMs, iso, MINUTE_MS, systemClock, type Clock } from '../lib/clock.js';
import type { Job } from '../jobs/scheduler.js';
import type { DeliveryStatus } from '../store/schema.js';
import type { Notification } from './message.js';
import { createSenders, type Senders, type SendResult } from './senders/index.js';
import { workerRepo, type ClaimedTask, type TaskOutcome, type WorkerStore } from './worker-repo.js';

/** How often the worker looks for work: the bound on the delay between an alert and its first attempt. */
export const DELIVERY_INTERVAL_MS = 2_000;
/** Waits after attempts 1-5 before the next one: 6 attempts over about 65 minutes. */
export const RETRY_DELAYS_MS = [1, 3, 10, 20, 30].map((m) => m * MINUTE_MS);
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
/** ±20 %: receivers that went down together are not all retried in the same second. */
const JITTER = 0.2;
/** A receiver's Retry-After is honoured up to this; beyond it the attempt budget would run out unspent. */
const MAX_RETRY_AFTER_MS = 60 * MINUTE_MS;
const OUTBOX_BATCH = 100;
const TASK_BATCH = 50;
/** A run keeps taking batches while they come full, up to this many, so a burst drains without waiting for ticks. */
const MAX_ROUNDS = 20;

export interface DeliveryWorkerOptions {
  senders?: Senders;
  /** Uniform in [0, 1): the jitter source. Tests pass a constant. */
  random?: () => number;
  logger?: Pick<Logger, 'warn'>;
  /** The time of the later rounds of a run (the first uses the scheduler's `now`); the service clock. */
  clock?: Clock;
}

/** The wait before attempt `attempt + 1`, jittered, or the receiver's Retry-After when that is longer. */
export function retryDelayMs(attempt: number, retryAfterSeconds: number | null, random: () => number): number {
  const base = RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length) - 1]!;
  const jittered = Math.round(base * (1 + (random() * 2 - 1) * JITTER));
  const asked = retryAfterSeconds === null ? 0 : Math.min(retryAfterSeconds * 1000, MAX_RETRY_AFTER_MS);
  return Math.max(jittered, asked);
}

function notificationOf(task: ClaimedTask): Notification {
  const payload = JSON.parse(task.payload) as Pick<Notification, 'alert' | 'server'>;
  return { event: task.event, alert: payload.alert, server: payload.server, at: task.outbox_created_at };
}

/**
 * Sends the notification outbox: plans one delivery per enabled channel for
 * each new outbox row, then sends every due delivery, records each attempt
 * and schedules retries. State lives in the store only, so a restarted
 * process (or another one) carries on where this one stopped.
 */
export function deliveryWorkerJob(store: WorkerStore, config: Config, options: DeliveryWorkerOptions = {}): Job {
  const repo = workerRepo(store);
  const senders = options.senders ?? createSenders(config);
  const sealer = channelConfigSealer(config.secretKey);
  const random = options.random ?? Math.random;
  // Longer than any one send can take, so a live worker finishes inside its lease.
  const leaseMs = config.delivery.timeoutMs + MINUTE_MS;

  function outcomeOf(task: ClaimedTask, result: SendResult | null, error: string | null, now: Date): TaskOutcome {
    const attempt = task.attempts + 1;
    const retry = result !== null && !result.ok && result.retryable && attempt < MAX_ATTEMPTS;
    const status: DeliveryStatus = result?.ok ? 'sent' : retry ? 'retrying' : 'failed';
    const nextAttemptAt = retry ? iso(addMs(now, retryDelayMs(attempt, result.retryAfterSeconds, random))) : iso(now);
    return {
      state: status === 'retrying' ? 'pending' : status,
      attempts: attempt,
      nextAttemptAt,
      attempt: {
        id: task.delivery_id, attempt, channel_id: task.channel_id, account_id: task.account_id, outbox_id: task.outbox_id,
        alert_id: task.alert_id, event: task.event, status, http_status: result?.httpStatus ?? null,
        smtp_reply: result?.smtpReply ?? null, error, duration_ms: result?.durationMs ?? 0, created_at: iso(now),
        next_attempt_at: retry ? nextAttemptAt : null,
      },
    };
  }

  async function deliver(task: ClaimedTask, now: Date): Promise<void> {
    const silenced = task.event !== 'alert.resolved' && task.alert_acknowledged === 1;
    let outcome: TaskOutcome;
    if (silenced || task.channel_enabled !== 1) {
      // Acknowledged before it went out, or the channel was switched off since: nothing is sent, no attempt recorded.
      outcome = { state: 'skipped', attempts: task.attempts, nextAttemptAt: iso(now), attempt: null };
    } else {
      const target = sealer.open({ id: task.channel_id, channel_type: task.channel_type, config: task.channel_config });
      if (target) {
        const result = await senders.send(target, notificationOf(task), { deliveryId: task.delivery_id, now });
        outcome = outcomeOf(task, result, result.error, now);
      } else {
        outcome = outcomeOf(task, null, 'the channel\'s stored config cannot be decrypted with the current SECRET_KEY; update its config', now);
      }
    }
    if (!(await repo.complete(task, outcome))) {
      options.logger?.warn({ delivery_id: task.delivery_id }, 'delivery lease ran out before the attempt was recorded');
    }
  }

  return {
    name: 'delivery-worker',
    intervalMs: DELIVERY_INTERVAL_MS,
    async run(start) {
      const clock = options.clock ?? systemClock;
      let failure: unknown = null;
      let now = start;
      for (let round = 0; round < MAX_ROUNDS; round++) {
        // A long run reads the clock again each round: attempts are signed with their own time (receivers
        // refuse webhook timestamps minutes old) and leases start when they are taken.
        if (round > 0) now = clock.now();
        const at = iso(now);
        const planned = await repo.fanOut(at, OUTBOX_BATCH);
        const tasks = await repo.claimDue(at, iso(addMs(now, leaseMs)), TASK_BATCH);
        // Each delivery goes to its own receiver; one slow receiver must not hold up the others, nor one
        // failing record the rest of the batch.
        const settled = await Promise.allSettled(tasks.map((task) => deliver(task, now)));
        failure ??= settled.find((s): s is PromiseRejectedResult => s.status === 'rejected')?.reason ?? null;
        if (planned < OUTBOX_BATCH && tasks.length < TASK_BATCH) break;
      }
      await repo.markDispatched(iso(now));
      // The scheduler logs it; the task whose record failed is retried when its lease runs out.
      if (failure) throw failure;
    },
  };
}
