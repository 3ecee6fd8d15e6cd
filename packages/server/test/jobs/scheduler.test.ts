import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import { startScheduler } from '../../src/jobs/scheduler.js';
import { FakeClock } from '../helpers/clock.js';

const silent = pino({ level: 'silent' });

test('the scheduler runs a job each interval with the clock\'s time, never two runs at once, and waits for it on stop', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const clock = new FakeClock();
  const seen: string[] = [];
  let release!: () => void;
  let blocked = new Promise<void>((resolve) => (release = resolve));
  const scheduler = startScheduler([{
    name: 'slow',
    intervalMs: 1000,
    async run(now) {
      seen.push(now.toISOString());
      await blocked;
    },
  }], { clock, logger: silent });

  t.mock.timers.tick(999);
  assert.equal(seen.length, 0);
  t.mock.timers.tick(1);
  assert.deepEqual(seen, [clock.now().toISOString()]);
  t.mock.timers.tick(3000); // the first run is still blocked: no overlapping runs
  assert.equal(seen.length, 1);

  release();
  await blocked;
  await new Promise((resolve) => setImmediate(resolve));
  blocked = new Promise<void>((resolve) => (release = resolve));
  clock.advance(60_000);
  t.mock.timers.tick(1000);
  assert.deepEqual(seen[1], clock.now().toISOString());

  let stopped = false;
  const stopping = scheduler.stop().then(() => (stopped = true));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(stopped, false, 'stop waits for the run in progress');
  release();
  await stopping;
  t.mock.timers.tick(5000);
  assert.equal(seen.length, 2, 'no run after stop');
});

test('a failing run is logged and the job runs again at the next tick', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  let calls = 0;
  const scheduler = startScheduler([{
    name: 'flaky',
    intervalMs: 10,
    async run() {
      calls += 1;
      throw new Error('boom');
    },
  }], { clock: new FakeClock(), logger: silent });
  t.mock.timers.tick(10);
  await new Promise((resolve) => setImmediate(resolve));
  t.mock.timers.tick(10);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(calls, 2);
  await scheduler.stop();
});
