import assert from 'node:assert/strict';
import { test } from 'node:test';
import { recordSample } from '../../src/features/health/metrics-repo.js';
import { rollupRepo } from '../../src/features/health/rollup-repo.js';
import { serviceJobs } from '../../src/jobs/index.js';
import { metricsRollupJob } from '../../src/jobs/metrics-rollup.js';
import { MINUTE_MS } from '../../src/lib/clock.js';
import { api, describeEachStore, registerUser, testConfig, type TestApp } from '../helpers/app.js';
import { createServer } from '../helpers/servers.js';

async function setup(t: TestApp) {
  // The job's progress is store-wide; each test starts it afresh, as on a new store, since tests write samples in the past.
  await t.store.db.deleteFrom('metric_rollup_progress').execute();
  const owner = await registerUser(t);
  const server = await createServer(t, owner.token, { name: 'db-1' });
  const record = (at: string, values: Record<string, number>) => recordSample(t.store.db, server.id, new Date(at), values);
  const history = async (query: string) => {
    const res = await api(t, 'GET', `/api/v1/servers/${server.id}/health/history?${query}`, { token: owner.token });
    assert.equal(res.status, 200, res.raw);
    return res.body;
  };
  const stored = async () => {
    const rows = await t.store.db.selectFrom('metric_rollups').select(['resolution', 'bucket', 'stats'])
      .where('server_id', '=', server.id).orderBy('resolution').orderBy('bucket').execute();
    return rows.map((r) => `${r.resolution} ${r.bucket} ${r.stats}`);
  };
  const progress = async () => {
    const rows = await t.store.db.selectFrom('metric_rollup_progress').select(['resolution', 'rolled_until']).orderBy('resolution').execute();
    return Object.fromEntries(rows.map((r) => [r.resolution, r.rolled_until]));
  };
  return { owner, server, record, history, stored, progress };
}

/** Every history query these tests compare: each resolution, picked series (cpu) and whole rows (disk). */
const QUERIES = [
  'metric=cpu&from=2026-11-20T22:00:00Z&to=2026-11-21T02:00:00Z&resolution=5m',
  'metric=cpu&from=2026-11-20T00:00:00Z&to=2026-11-22T00:00:00Z&resolution=1h',
  'metric=cpu&from=2026-11-19T00:00:00Z&to=2026-11-23T00:00:00Z&resolution=1d',
  'metric=disk&from=2026-11-20T00:00:00Z&to=2026-11-22T00:00:00Z&resolution=1h',
  'metric=disk&from=2026-11-19T00:00:00Z&to=2026-11-23T00:00:00Z&resolution=1d',
];

describeEachStore('metrics-rollup job', (t) => {
  test('history answers the same before the job ran, part way through, and after', async () => {
    const s = await setup(t);
    const start = Date.parse('2026-11-20T22:53:00.000Z');
    for (let i = 0; i < 40; i++) {
      const at = new Date(start + i * 4 * MINUTE_MS + 7_000).toISOString();
      await s.record(at, { cpu_percent: (i * 7) % 100, disk_max_percent: 50 + (i % 5), [`disk:/${i % 2 ? 'var' : 'data'}`]: 40 + i });
    }
    const answers = async () => Promise.all(QUERIES.map((q) => s.history(q)));
    const unrolled = await answers();
    assert.ok(unrolled[0].series[0].points.length > 20, 'the 5m query has points');
    assert.equal(unrolled[2].series[0].points.length, 2, 'the samples cross midnight: two days');

    // Part way: the 5m buckets up to 23:55 and the 1h bucket 22:00 are rolled, the rest is not.
    await metricsRollupJob(t.store).run(new Date('2026-11-20T23:59:30.000Z'));
    assert.deepEqual(await s.progress(), { '1d': '2026-11-20T00:00:00.000Z', '1h': '2026-11-20T23:00:00.000Z', '5m': '2026-11-20T23:55:00.000Z' });
    assert.deepEqual(await answers(), unrolled);

    await metricsRollupJob(t.store).run(new Date('2026-11-23T00:05:00.000Z'));
    assert.deepEqual(await s.progress(), { '1d': '2026-11-23T00:00:00.000Z', '1h': '2026-11-23T00:00:00.000Z', '5m': '2026-11-23T00:00:00.000Z' });
    const stored = await s.stored();
    assert.equal(stored.filter((r) => r.startsWith('1d ')).length, 2);
    assert.equal(stored.filter((r) => r.startsWith('1h ')).length, 4, '22:00, 23:00, 00:00 and 01:00');
    assert.deepEqual(await answers(), unrolled);
  });

  test('rolls a bucket only once it has closed and a minute has passed', async () => {
    const s = await setup(t);
    await s.record('2026-11-20T10:02:00.000Z', { cpu_percent: 10 });
    await s.record('2026-11-20T10:04:30.000Z', { cpu_percent: 30 });
    const job = metricsRollupJob(t.store);
    await job.run(new Date('2026-11-20T10:05:59.999Z'));
    assert.deepEqual(await s.stored(), [], 'a sample stamped at 10:04:59 may still be committing');
    await job.run(new Date('2026-11-20T10:06:00.000Z'));
    assert.deepEqual(await s.stored(), ['5m 2026-11-20T10:00:00.000Z {"cpu_percent":[2,40,10,30]}']);

    await s.record('2026-11-20T10:07:00.000Z', { cpu_percent: 50 });
    await job.run(new Date('2026-11-20T11:01:00.000Z'));
    assert.deepEqual(await s.stored(), [
      '1h 2026-11-20T10:00:00.000Z {"cpu_percent":[3,90,10,50]}',
      '5m 2026-11-20T10:00:00.000Z {"cpu_percent":[2,40,10,30]}',
      '5m 2026-11-20T10:05:00.000Z {"cpu_percent":[1,50,50,50]}',
    ]);
  });

  test('a second instance (another process) writes the same rows and never moves the progress back', async () => {
    const s = await setup(t);
    const other = await createServer(t, s.owner.token, { name: 'db-2' });
    await s.record('2026-11-20T10:02:00.000Z', { cpu_percent: 10 });
    await recordSample(t.store.db, other.id, new Date('2026-11-20T10:03:00.000Z'), { cpu_percent: 70 });
    const at = new Date('2026-11-21T01:00:00.000Z');
    await Promise.all([metricsRollupJob(t.store).run(at), metricsRollupJob(t.store).run(at)]);
    const once = await s.stored();
    await metricsRollupJob(t.store).run(at);
    assert.deepEqual(await s.stored(), once);
    assert.deepEqual(once, [
      '1d 2026-11-20T00:00:00.000Z {"cpu_percent":[1,10,10,10]}',
      '1h 2026-11-20T10:00:00.000Z {"cpu_percent":[1,10,10,10]}',
      '5m 2026-11-20T10:00:00.000Z {"cpu_percent":[1,10,10,10]}',
    ]);
    await rollupRepo(t.store.db).advance('5m', '2026-11-20T11:00:00.000Z');
    assert.equal((await s.progress())['5m'], '2026-11-21T00:55:00.000Z');
  });

  test('jumps over weeks without data and rolls what comes after', async () => {
    const s = await setup(t);
    await s.record('2026-10-01T00:01:00.000Z', { cpu_percent: 5 });
    await s.record('2026-11-20T00:01:00.000Z', { cpu_percent: 15 });
    await metricsRollupJob(t.store).run(new Date('2026-11-21T00:02:00.000Z'));
    assert.deepEqual((await s.stored()).filter((r) => r.startsWith('1d ')), [
      '1d 2026-10-01T00:00:00.000Z {"cpu_percent":[1,5,5,5]}',
      '1d 2026-11-20T00:00:00.000Z {"cpu_percent":[1,15,15,15]}',
    ]);
  });

  test('a sample stamped inside an already rolled bucket stays in the raw history only', async () => {
    const s = await setup(t);
    await s.record('2026-11-20T10:01:00.000Z', { cpu_percent: 10 });
    await metricsRollupJob(t.store).run(new Date('2026-11-20T10:30:00.000Z'));
    await s.record('2026-11-20T10:02:00.000Z', { cpu_percent: 90 });
    await metricsRollupJob(t.store).run(new Date('2026-11-20T10:40:00.000Z'));
    assert.deepEqual(await s.stored(), ['5m 2026-11-20T10:00:00.000Z {"cpu_percent":[1,10,10,10]}']);
    const minutes = await s.history('metric=cpu&from=2026-11-20T10:00:00Z&to=2026-11-20T10:05:00Z&resolution=1m');
    assert.equal(minutes.series[0].points.length, 2);
  });

  test('runs in the service process every minute', async () => {
    const job = serviceJobs(t.store, testConfig()).find((j) => j.name === 'metrics-rollup');
    assert.ok(job);
    assert.equal(job.intervalMs, MINUTE_MS);
  });
});
