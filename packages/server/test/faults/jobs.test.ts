import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import pino from 'pino';
import { idempotencyCleanupJob } from '../../src/jobs/idempotency-cleanup.js';
import { startScheduler, type Job } from '../../src/jobs/scheduler.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { storeKinds } from '../helpers/stores.js';
import { postgresTarget, startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

/** The store going away and coming back, per kind: the SQLite lock taken by another connection, or the proxy to PostgreSQL cut. */
interface Outage {
  app: TestApp;
  begin(): Promise<void>;
  end(): Promise<void>;
  close(): Promise<void>;
}

async function outageFor(kind: 'sqlite' | 'postgres'): Promise<Outage> {
  if (kind === 'sqlite') {
    const app = await startApp('sqlite', { store: { sqliteBusyTimeoutMs: 50 } });
    const locker = new SQLite(join(app.location, 'kiln.sqlite'));
    return {
      app,
      begin: async () => void locker.exec('BEGIN IMMEDIATE'),
      end: async () => void locker.exec('ROLLBACK'),
      async close() {
        if (locker.inTransaction) locker.exec('ROLLBACK');
        locker.close();
        await app.close();
      },
    };
  }
  const proxy: TcpProxy = await startTcpProxy(postgresTarget());
  const app = await startApp('postgres', { store: { via: (url) => proxy.via(url), connectTimeoutMs: 500 } });
  return {
    app,
    begin: () => proxy.cut(),
    end: () => proxy.restore(),
    async close() {
      await app.close();
      await proxy.close();
    },
  };
}

for (const kind of storeKinds()) {
  describe(`background jobs through a store outage [${kind}]`, () => {
    let outage: Outage;
    before(async () => {
      outage = await outageFor(kind);
    });
    after(async () => outage.close());

    test('the tick during the outage fails and is logged at warn; the next tick after it does the work; the scheduler never stops', async (ctx) => {
      ctx.mock.timers.enable({ apis: ['setInterval'] });
      const { app } = outage;
      const logs: string[] = [];
      const logger = pino({ level: 'info' }, new Writable({ write(chunk, _e, done) { logs.push(String(chunk)); done(); } }));
      const expired = { account_id: 'acc_jobs', idem_key: 'old-key', request_hash: 'h', state: 'done' as const, status_code: 201, response_body: '',
        created_at: '2026-11-20T12:00:00.000Z', locked_until: '2026-11-20T12:01:00.000Z', expires_at: '2026-11-21T12:00:00.000Z' };
      await app.store.db.insertInto('idempotency_keys').values(expired).execute();
      const remaining = async () => (await app.store.db.selectFrom('idempotency_keys').select('idem_key').where('account_id', '=', 'acc_jobs').execute()).length;

      // The real job, watched: each run's promise, to wait for the tick's end (and the scheduler's logging, which is chained first).
      const job = idempotencyCleanupJob(app.store.db);
      const runs: Array<Promise<void>> = [];
      const watched: Job = { ...job, run: (now) => { const run = job.run(now); runs.push(run); return run; } };
      const scheduler = startScheduler([watched], { clock: app.clock, logger });
      const tick = async () => {
        ctx.mock.timers.tick(job.intervalMs);
        await runs.at(-1)!.catch(() => {});
        await new Promise((resolve) => setImmediate(resolve));
      };
      try {
        await outage.begin();
        try {
          await tick();
        } finally {
          await outage.end();
        }
        assert.equal(runs.length, 1);
        const failed = logs.map((line) => JSON.parse(line)).filter((entry) => entry.job === job.name);
        assert.equal(failed.length, 1, logs.join(''));
        assert.equal(failed[0].level, 40, 'warn, not error: an outage ends by itself');
        assert.match(failed[0].msg, /store unavailable; retried at the next tick/);
        assert.equal(await remaining(), 1, 'the failed tick deleted nothing');

        await tick();
        assert.equal(runs.length, 2, 'the next tick ran');
        assert.equal(await remaining(), 0, 'and did the work');
        assert.equal(logs.length, 1, 'without a new failure');
      } finally {
        await scheduler.stop();
      }
    });
  });
}
