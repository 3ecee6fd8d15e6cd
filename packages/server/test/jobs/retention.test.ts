import assert from 'node:assert/strict';
import { test } from 'node:test';
import { recordSample } from '../../src/features/health/metrics-repo.js';
import { serviceJobs } from '../../src/jobs/index.js';
import { metricsRetentionJob } from '../../src/jobs/metrics-retention.js';
import { metricsRollupJob } from '../../src/jobs/metrics-rollup.js';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../../src/lib/clock.js';
import { describeEachStore, registerUser, testConfig, type TestApp } from '../helpers/app.js';
import { createServer } from '../helpers/servers.js';

const RETENTION = { rawDays: 1, fiveMinuteDays: 2, hourDays: 3, dayDays: 4 };

async function setup(t: TestApp) {
  // The job's progress is store-wide; each test starts it afresh, as on a new store, since tests write samples in the past.
  await t.store.db.deleteFrom('metric_rollup_progress').execute();
  const owner = await registerUser(t);
  const server = await createServer(t, owner.token, { name: 'kept' });
  const record = (at: string) => recordSample(t.store.db, server.id, new Date(at), { cpu_percent: 1 });
  const kept = async () => {
    const samples = await t.store.db.selectFrom('metric_samples').select('ts').where('server_id', '=', server.id).orderBy('ts').execute();
    const rollups = await t.store.db.selectFrom('metric_rollups').select(['resolution', 'bucket'])
      .where('server_id', '=', server.id).orderBy('resolution').orderBy('bucket').execute();
    const of = (resolution: string) => rollups.filter((r) => r.resolution === resolution).map((r) => r.bucket);
    return { raw: samples.map((s) => s.ts), '5m': of('5m'), '1h': of('1h'), '1d': of('1d') };
  };
  return { server, record, kept };
}

describeEachStore('metrics retention job', (t) => {
  test('deletes raw samples and each resolution of rollups past its own retention', async () => {
    const s = await setup(t);
    await s.record('2026-11-10T23:58:00.000Z');
    await s.record('2026-11-11T00:02:00.000Z');
    await s.record('2026-11-11T12:00:00.000Z');
    await metricsRollupJob(t.store).run(new Date('2026-11-12T01:00:00.000Z'));
    const job = metricsRetentionJob(t.store, RETENTION);

    t.clock.set('2026-11-11T23:59:00.000Z'); // raw cutoff 11-10T23:59: only the first sample is older
    await job.run(t.clock.now());
    let kept = await s.kept();
    assert.deepEqual(kept.raw, ['2026-11-11T00:02:00.000Z', '2026-11-11T12:00:00.000Z']);
    assert.equal(kept['5m'].length, 3, 'rollups outlive the raw samples');

    // 5m cutoff 11-11T00:01: the 23:55 bucket ended at 11-11T00:00 and goes; 00:00 (ends 00:05) stays.
    t.clock.set('2026-11-13T00:01:00.000Z');
    await job.run(t.clock.now());
    kept = await s.kept();
    assert.deepEqual(kept.raw, []);
    assert.deepEqual(kept['5m'], ['2026-11-11T00:00:00.000Z', '2026-11-11T12:00:00.000Z']);
    assert.equal(kept['1h'].length, 3);

    // 1h cutoff 11-11T01:30: 11-10T23:00 and 11-11T00:00 ended; 11-11T12:00 ends at 13:00 and stays.
    t.clock.set('2026-11-14T01:30:00.000Z');
    await job.run(t.clock.now());
    kept = await s.kept();
    assert.deepEqual(kept['5m'], []);
    assert.deepEqual(kept['1h'], ['2026-11-11T12:00:00.000Z']);
    assert.deepEqual(kept['1d'], ['2026-11-10T00:00:00.000Z', '2026-11-11T00:00:00.000Z']);

    // 1d cutoff 11-11T23:59:59.999: the day of 11-10 ended at 11-11T00:00; the day of 11-11 ends one ms later.
    t.clock.set('2026-11-15T23:59:59.999Z');
    await job.run(t.clock.now());
    assert.deepEqual((await s.kept())['1d'], ['2026-11-11T00:00:00.000Z']);
    t.clock.advance(1);
    await job.run(t.clock.now());
    assert.deepEqual(await s.kept(), { raw: [], '5m': [], '1h': [], '1d': [] });
  });

  test('works through a backlog in batches and leaves newer rows alone', async () => {
    const s = await setup(t);
    const other = await createServer(t, (await registerUser(t)).token, { name: 'other' });
    t.clock.set('2026-11-20T00:00:00.000Z');
    const start = Date.parse('2026-11-18T00:00:00.000Z');
    for (let i = 0; i < 20; i++) {
      await s.record(new Date(start + i * 5 * MINUTE_MS).toISOString());
      await recordSample(t.store.db, other.id, new Date(start + i * 5 * MINUTE_MS + 1000), { cpu_percent: 2 });
    }
    await s.record(new Date(t.clock.now().getTime() - HOUR_MS).toISOString());
    await metricsRollupJob(t.store).run(t.clock.now());
    await metricsRetentionJob(t.store, RETENTION, { batchRows: 3 }).run(t.clock.now());

    const raw = await t.store.db.selectFrom('metric_samples').select(['server_id', 'ts']).execute();
    assert.deepEqual(raw.map((r) => r.ts), ['2026-11-19T23:00:00.000Z'], 'all 40 old samples of both servers went, 3 at a time');
    const fiveMinute = await t.store.db.selectFrom('metric_rollups').select('bucket').where('resolution', '=', '5m')
      .where('bucket', '<', '2026-11-18T00:00:00.000Z').execute();
    assert.deepEqual(fiveMinute, []);
    const stillFive = await t.store.db.selectFrom('metric_rollups').select('bucket').where('resolution', '=', '5m').execute();
    assert.equal(stillFive.length, 41, '5m buckets within 2 days are kept (20 per server and the recent one)');
  });

  test('runs in the service process every 10 minutes with the configured retention', async () => {
    const config = testConfig({ retention: { rawDays: 2, fiveMinuteDays: 3, hourDays: 4, dayDays: 5 } });
    const job = serviceJobs(t.store, config).find((j) => j.name === 'metrics-retention');
    assert.ok(job);
    assert.equal(job.intervalMs, 10 * MINUTE_MS);
    const s = await setup(t);
    t.clock.set('2026-12-01T00:00:00.000Z');
    await s.record(new Date(t.clock.now().getTime() - 2 * DAY_MS + MINUTE_MS).toISOString());
    await s.record(new Date(t.clock.now().getTime() - 2 * DAY_MS - MINUTE_MS).toISOString());
    await job.run(t.clock.now());
    assert.deepEqual((await s.kept()).raw, ['2026-11-29T00:01:00.000Z']);
  });
});
