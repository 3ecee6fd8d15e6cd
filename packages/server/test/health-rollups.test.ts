import assert from 'node:assert/strict';
import { test } from 'node:test';
import { recordSample } from '../src/features/health/metrics-repo.js';
import { bucketStartMs } from '../src/features/health/rollups.js';
import { metricsRollupJob } from '../src/jobs/metrics-rollup.js';
import { api, describeEachStore, registerUser, type TestApp } from './helpers/app.js';
import { createServer } from './helpers/servers.js';

async function setup(t: TestApp) {
  // The job's progress is store-wide; each test starts it afresh, as on a new store, since tests write samples in the past.
  await t.store.db.deleteFrom('metric_rollup_progress').execute();
  const owner = await registerUser(t);
  const server = await createServer(t, owner.token, { name: 'db-1' });
  const record = (at: string, values: Record<string, number>) => recordSample(t.store.db, server.id, new Date(at), values);
  const job = metricsRollupJob(t.store);
  /** Runs the rollup job as it would run at `at` (default: long after every sample here). */
  const rollUp = (at = '2026-12-31T00:00:00.000Z') => job.run(new Date(at));
  /** The stored rollups of one resolution, after the job has rolled everything. */
  const rollups = async (resolution: string) => {
    await rollUp();
    const rows = await t.store.db.selectFrom('metric_rollups').select(['bucket', 'stats'])
      .where('server_id', '=', server.id).where('resolution', '=', resolution as '5m').orderBy('bucket').execute();
    return Object.fromEntries(rows.map((r) => [r.bucket, JSON.parse(r.stats)]));
  };
  const history = (query: string) => api(t, 'GET', `/api/v1/servers/${server.id}/health/history?${query}`, { token: owner.token });
  return { owner, server, record, rollUp, rollups, history };
}

describeEachStore('metrics rollups at 5m, 1h and 1d', (t) => {
  test('samples at 10:58, 11:02 and 11:07 give 5m buckets 10:55, 11:00, 11:05 and 1h buckets 10:00, 11:00', async () => {
    const s = await setup(t);
    await s.record('2026-11-20T10:58:00.000Z', { cpu_percent: 10 });
    await s.record('2026-11-20T11:02:00.000Z', { cpu_percent: 30 });
    await s.record('2026-11-20T11:07:00.000Z', { cpu_percent: 50 });

    assert.deepEqual(await s.rollups('5m'), {
      '2026-11-20T10:55:00.000Z': { cpu_percent: [1, 10, 10, 10] },
      '2026-11-20T11:00:00.000Z': { cpu_percent: [1, 30, 30, 30] },
      '2026-11-20T11:05:00.000Z': { cpu_percent: [1, 50, 50, 50] },
    });
    assert.deepEqual(await s.rollups('1h'), {
      '2026-11-20T10:00:00.000Z': { cpu_percent: [1, 10, 10, 10] },
      '2026-11-20T11:00:00.000Z': { cpu_percent: [2, 80, 30, 50] },
    });
    assert.deepEqual(await s.rollups('1d'), { '2026-11-20T00:00:00.000Z': { cpu_percent: [3, 90, 10, 50] } });
    const samples = await t.store.db.selectFrom('metric_samples').select('ts').where('server_id', '=', s.server.id).execute();
    assert.equal(samples.length, 3, 'the raw samples are kept too');

    const range = 'metric=cpu&from=2026-11-20T10:00:00Z&to=2026-11-20T12:00:00Z';
    const fiveMinutes = await s.history(`${range}&resolution=5m`);
    assert.equal(fiveMinutes.status, 200, fiveMinutes.raw);
    assert.deepEqual(fiveMinutes.body.series[0].points, [
      ['2026-11-20T10:55:00.000Z', 10, 10, 10],
      ['2026-11-20T11:00:00.000Z', 30, 30, 30],
      ['2026-11-20T11:05:00.000Z', 50, 50, 50],
    ]);
    const hourly = await s.history(`${range}&resolution=1h`);
    assert.deepEqual(hourly.body.series[0].points, [
      ['2026-11-20T10:00:00.000Z', 10, 10, 10],
      ['2026-11-20T11:00:00.000Z', 40, 30, 50],
    ]);
  });

  test('a bucket takes every sample inside it: count, sum, min and max', async () => {
    const s = await setup(t);
    const values = [12.5, 3, 99.25, 40];
    for (const [i, v] of values.entries()) await s.record(`2026-11-20T08:0${i}:30.000Z`, { ram_percent: v, swap_used_mb: 100 * i });
    const five = await s.rollups('5m');
    assert.deepEqual(five['2026-11-20T08:00:00.000Z'], {
      ram_percent: [4, 154.75, 3, 99.25],
      swap_used_mb: [4, 600, 0, 300],
    });
    const res = await s.history('metric=memory&from=2026-11-20T08:00:00Z&to=2026-11-20T08:05:00Z&resolution=5m');
    assert.deepEqual(res.body.series, [
      { name: 'ram_percent', unit: '%', points: [['2026-11-20T08:00:00.000Z', 38.69, 3, 99.25]] },
      { name: 'swap_used_mb', unit: 'MB', points: [['2026-11-20T08:00:00.000Z', 150, 0, 300]] },
    ]);
  });

  test('the 1d bucket ends at midnight UTC', async () => {
    const s = await setup(t);
    await s.record('2026-11-20T23:58:00.000Z', { cpu_percent: 20 });
    await s.record('2026-11-21T00:03:00.000Z', { cpu_percent: 60 });
    await s.record('2026-11-21T13:00:00.000Z', { cpu_percent: 80 });
    assert.deepEqual(Object.keys(await s.rollups('1d')), ['2026-11-20T00:00:00.000Z', '2026-11-21T00:00:00.000Z']);
    assert.deepEqual(Object.keys(await s.rollups('1h')), ['2026-11-20T23:00:00.000Z', '2026-11-21T00:00:00.000Z', '2026-11-21T13:00:00.000Z']);
    const res = await s.history('metric=cpu&from=2026-11-19T00:00:00Z&to=2026-11-22T00:00:00Z&resolution=1d');
    assert.deepEqual(res.body.series[0].points, [
      ['2026-11-20T00:00:00.000Z', 20, 20, 20],
      ['2026-11-21T00:00:00.000Z', 70, 60, 80],
    ]);
  });

  test('a series missing from a sample does not count in its buckets', async () => {
    const s = await setup(t);
    await s.record('2026-11-20T09:00:00.000Z', { cpu_percent: 10, cpu_temp_c: 50 });
    await s.record('2026-11-20T09:01:00.000Z', { cpu_percent: 20 });
    const hour = (await s.rollups('1h'))['2026-11-20T09:00:00.000Z'];
    assert.deepEqual(hour, { cpu_percent: [2, 30, 10, 20], cpu_temp_c: [1, 50, 50, 50] });
  });

  test('values are stored with 4 decimals and sums pick up no float noise', async () => {
    const s = await setup(t);
    await s.record('2026-11-20T09:00:00.000Z', { cpu_percent: 0.1, ram_percent: 100 / 3 });
    await s.record('2026-11-20T09:01:00.000Z', { cpu_percent: 0.2, ram_percent: 100 / 3 });
    const raw = await t.store.db.selectFrom('metric_samples').select('metrics').where('server_id', '=', s.server.id).orderBy('ts').execute();
    assert.equal(raw[0]!.metrics, '{"cpu_percent":0.1,"ram_percent":33.3333}');
    assert.deepEqual((await s.rollups('1h'))['2026-11-20T09:00:00.000Z'], {
      cpu_percent: [2, 0.3, 0.1, 0.2],
      ram_percent: [2, 66.6666, 33.3333, 33.3333],
    });
  });

  test('a sample without values keeps its raw row and touches no rollup', async () => {
    const s = await setup(t);
    await s.record('2026-11-20T09:00:00.000Z', {});
    assert.deepEqual(await s.rollups('5m'), {});
    const raw = await t.store.db.selectFrom('metric_samples').select('metrics').where('server_id', '=', s.server.id).execute();
    assert.deepEqual(raw.map((r) => r.metrics), ['{}']);
  });

  test('per-mount disk series roll up under their own names', async () => {
    const s = await setup(t);
    await s.record('2026-11-20T09:00:00.000Z', { disk_max_percent: 70, 'disk:/': 40, 'disk:/var': 70 });
    await s.record('2026-11-20T09:10:00.000Z', { disk_max_percent: 80, 'disk:/': 42, 'disk:/var': 80, 'disk:/mnt/backup': 10 });
    assert.deepEqual((await s.rollups('1h'))['2026-11-20T09:00:00.000Z'], {
      disk_max_percent: [2, 150, 70, 80],
      'disk:/': [2, 82, 40, 42],
      'disk:/var': [2, 150, 70, 80],
      'disk:/mnt/backup': [1, 10, 10, 10],
    });
  });

  test('each server has its own buckets', async () => {
    const s = await setup(t);
    const other = await createServer(t, s.owner.token, { name: 'db-2' });
    await s.record('2026-11-20T09:00:00.000Z', { cpu_percent: 10 });
    await recordSample(t.store.db, other.id, new Date('2026-11-20T09:01:00.000Z'), { cpu_percent: 90 });
    assert.deepEqual((await s.rollups('5m'))['2026-11-20T09:00:00.000Z'], { cpu_percent: [1, 10, 10, 10] });
  });

  test('recordSample runs inside a caller\'s transaction', async () => {
    const s = await setup(t);
    await assert.rejects(t.store.db.transaction().execute(async (tx) => {
      await recordSample(tx, s.server.id, new Date('2026-11-20T09:00:00.000Z'), { cpu_percent: 10 });
      throw new Error('ingest failed later');
    }));
    const raw = await t.store.db.selectFrom('metric_samples').select('ts').where('server_id', '=', s.server.id).execute();
    assert.deepEqual(raw, [], 'rolled back with the transaction');
    assert.deepEqual(await s.rollups('1d'), {});
  });
});

test('bucket starts align to 5-minute boundaries, whole hours and midnight UTC', () => {
  const ms = Date.parse('2026-11-20T23:59:59.999Z');
  const at = (resolution: '1m' | '5m' | '1h' | '1d') => new Date(bucketStartMs(ms, resolution)).toISOString();
  assert.equal(at('1m'), '2026-11-20T23:59:00.000Z');
  assert.equal(at('5m'), '2026-11-20T23:55:00.000Z');
  assert.equal(at('1h'), '2026-11-20T23:00:00.000Z');
  assert.equal(at('1d'), '2026-11-20T00:00:00.000Z');
  assert.equal(new Date(bucketStartMs(Date.parse('2024-02-29T12:00:00Z'), '1d')).toISOString(), '2024-02-29T00:00:00.000Z');
});
