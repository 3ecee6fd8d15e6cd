import assert from 'node:assert/strict';
import { test } from 'node:test';
import { recordSample } from '../src/features/health/metrics-repo.js';
import { DAY_MS, HOUR_MS } from '../src/lib/clock.js';
import { api, createKey, describeEachStore, expectEnvelope, registerUser, type TestApp } from './helpers/app.js';
import { createServer, trashServer } from './helpers/servers.js';

async function setup(t: TestApp) {
  const owner = await registerUser(t);
  const server = await createServer(t, owner.token, { name: 'web-1' });
  const record = (at: string | Date, values: Record<string, number>) => recordSample(t.store.db, server.id, new Date(at), values);
  const history = (query: string, token = owner.token) => api(t, 'GET', `/api/v1/servers/${server.id}/health/history?${query}`, { token });
  return { owner, server, record, history };
}

const ago = (t: TestApp, ms: number) => new Date(t.clock.now().getTime() - ms).toISOString();
const pointsOf = (body: any, name: string) => body.series.find((s: { name: string }) => s.name === name)?.points;

describeEachStore('GET /servers/:id/health/history', (t) => {
  test('defaults to the last hour at 1m, every metric with its series and units', async () => {
    t.clock.set('2026-11-22T12:00:30.000Z');
    const s = await setup(t);
    const values = { cpu_percent: 12.345, ram_percent: 50, swap_used_mb: 256, disk_max_percent: 81, 'disk:/var': 81, 'disk:/': 33.333,
      rx_mbps: 1.5, tx_mbps: 0.25, cpu_temp_c: 61 };
    await s.record('2026-11-22T11:00:10.000Z', { cpu_percent: 99 }); // bucket 11:00 starts before from (11:00:30)
    await s.record('2026-11-22T11:30:05.000Z', values);
    await s.record('2026-11-22T12:00:10.000Z', { ...values, cpu_percent: 20 });

    const cpu = await s.history('metric=cpu');
    assert.equal(cpu.status, 200, cpu.raw);
    assert.deepEqual(cpu.body, {
      server_id: s.server.id, metric: 'cpu', resolution: '1m', from: '2026-11-22T11:00:30.000Z', to: '2026-11-22T12:00:30.000Z',
      series: [{ name: 'cpu_percent', unit: '%', points: [['2026-11-22T11:30:00.000Z', 12.35, 12.35, 12.35], ['2026-11-22T12:00:00.000Z', 20, 20, 20]] }],
    });
    const names = async (metric: string) => (await s.history(`metric=${metric}`)).body.series.map((x: any) => `${x.name} ${x.unit}`);
    assert.deepEqual(await names('memory'), ['ram_percent %', 'swap_used_mb MB']);
    assert.deepEqual(await names('disk'), ['disk_max_percent %', 'disk:/ %', 'disk:/var %']);
    assert.deepEqual(await names('network'), ['rx_mbps Mbit/s', 'tx_mbps Mbit/s']);
    assert.deepEqual(await names('temperature'), ['cpu_temp_c °C']);
    const disk = await s.history('metric=disk');
    assert.deepEqual(pointsOf(disk.body, 'disk:/'), [['2026-11-22T11:30:00.000Z', 33.33, 33.33, 33.33], ['2026-11-22T12:00:00.000Z', 33.33, 33.33, 33.33]]);
  });

  test('fixed series are listed even when empty; a mount appears only with data in range; empty buckets are omitted', async () => {
    const s = await setup(t);
    await s.record('2026-11-20T10:00:00.000Z', { disk_max_percent: 50, 'disk:/old': 50 });
    await s.record('2026-11-20T10:20:00.000Z', { disk_max_percent: 60, 'disk:/': 60 });
    await s.record('2026-11-20T10:40:00.000Z', { cpu_percent: 5 });
    const disk = await s.history('metric=disk&from=2026-11-20T10:10:00Z&to=2026-11-20T11:00:00Z');
    assert.deepEqual(disk.body.series, [
      { name: 'disk_max_percent', unit: '%', points: [['2026-11-20T10:20:00.000Z', 60, 60, 60]] },
      { name: 'disk:/', unit: '%', points: [['2026-11-20T10:20:00.000Z', 60, 60, 60]] },
    ]);
    const temp = await s.history('metric=temperature&from=2026-11-20T10:00:00Z&to=2026-11-20T11:00:00Z');
    assert.deepEqual(temp.body.series, [{ name: 'cpu_temp_c', unit: '°C', points: [] }]);
    const fiveMin = await s.history('metric=disk&from=2026-11-20T10:00:00Z&to=2026-11-20T11:00:00Z&resolution=5m');
    assert.deepEqual(pointsOf(fiveMin.body, 'disk_max_percent').map((p: any[]) => p[0]), ['2026-11-20T10:00:00.000Z', '2026-11-20T10:20:00.000Z']);
  });

  test('mount names are shown as reported, whatever characters they hold', async () => {
    const s = await setup(t);
    const weird = 'disk:/mnt/a "quoted", [odd] \\ mount';
    await s.record('2026-11-20T10:00:00.000Z', { cpu_percent: 7, disk_max_percent: 5, [weird]: 5, 'disk:/mnt/x"cpu_percent': 9 });
    for (const resolution of ['1m', '1h']) {
      const disk = await s.history(`metric=disk&from=2026-11-20T10:00:00Z&to=2026-11-20T11:00:00Z&resolution=${resolution}`);
      assert.deepEqual(disk.body.series.map((x: { name: string }) => x.name), ['disk_max_percent', weird, 'disk:/mnt/x"cpu_percent']);
      const cpu = await s.history(`metric=cpu&from=2026-11-20T10:00:00Z&to=2026-11-20T11:00:00Z&resolution=${resolution}`);
      assert.deepEqual(cpu.body.series, [{ name: 'cpu_percent', unit: '%', points: [[`2026-11-20T10:00:00.000Z`, 7, 7, 7]] }]);
    }
  });

  test('1m buckets average the samples of one minute', async () => {
    const s = await setup(t);
    await s.record('2026-11-20T10:00:01.000Z', { cpu_percent: 10 });
    await s.record('2026-11-20T10:00:58.000Z', { cpu_percent: 21 });
    const res = await s.history('metric=cpu&from=2026-11-20T10:00:00Z&to=2026-11-20T10:01:00Z&resolution=1m');
    assert.deepEqual(res.body.series[0].points, [['2026-11-20T10:00:00.000Z', 15.5, 10, 21]]);
  });

  test('returns the buckets whose start lies in [from, to)', async () => {
    const s = await setup(t);
    await s.record('2026-11-20T10:58:30.000Z', { cpu_percent: 1 });
    await s.record('2026-11-20T11:02:00.000Z', { cpu_percent: 2 });
    await s.record('2026-11-20T11:07:00.000Z', { cpu_percent: 3 });
    const starts = async (query: string) => (await s.history(`metric=cpu&${query}`)).body.series[0].points.map((p: any[]) => p[0].slice(11, 19));
    assert.deepEqual(await starts('from=2026-11-20T10:58:00Z&to=2026-11-20T11:05:00Z&resolution=5m'), ['11:00:00']);
    assert.deepEqual(await starts('from=2026-11-20T10:55:00Z&to=2026-11-20T11:05:00.001Z&resolution=5m'), ['10:55:00', '11:00:00', '11:05:00']);
    assert.deepEqual(await starts('from=2026-11-20T10:58:10Z&to=2026-11-20T11:07:00Z&resolution=1m'), ['11:02:00']);
    assert.deepEqual(await starts('from=2026-11-20T10:58:00Z&to=2026-11-20T11:07:00.001Z&resolution=1m'), ['10:58:00', '11:02:00', '11:07:00']);
    assert.deepEqual(await starts('from=2026-11-20T10:00:01Z&to=2026-11-20T12:00:00Z&resolution=1h'), ['11:00:00']);
  });

  test('automatic resolution: ≤ 6 h → 1m, ≤ 2 d → 5m, ≤ 60 d → 1h, else 1d', async () => {
    const s = await setup(t);
    const to = '2026-11-22T00:00:00.000Z';
    const before = (ms: number) => new Date(Date.parse(to) - ms).toISOString();
    const cases: Array<[number, string]> = [
      [HOUR_MS, '1m'], [6 * HOUR_MS, '1m'], [6 * HOUR_MS + 1, '5m'], [2 * DAY_MS, '5m'], [2 * DAY_MS + 1, '1h'],
      [60 * DAY_MS, '1h'], [60 * DAY_MS + 1, '1d'], [365 * DAY_MS, '1d'],
    ];
    for (const [range, expected] of cases) {
      const res = await s.history(`metric=cpu&from=${before(range)}&to=${to}`);
      assert.equal(res.status, 200, res.raw);
      assert.equal(res.body.resolution, expected, `range ${range} ms`);
    }
  });

  test('an explicit resolution wins over the automatic one', async () => {
    const s = await setup(t);
    await s.record('2026-11-20T10:10:00.000Z', { cpu_percent: 10 });
    await s.record('2026-11-20T10:20:00.000Z', { cpu_percent: 30 });
    const res = await s.history('metric=cpu&from=2026-11-20T10:00:00Z&to=2026-11-20T11:00:00Z&resolution=1h');
    assert.equal(res.body.resolution, '1h');
    assert.deepEqual(res.body.series[0].points, [['2026-11-20T10:00:00.000Z', 20, 10, 30]]);
  });

  test('30 days read the hourly rollups: 720 points', async () => {
    const s = await setup(t);
    const now = t.clock.now().getTime();
    const start = Math.floor(now / HOUR_MS) * HOUR_MS - 720 * HOUR_MS;
    const rows = Array.from({ length: 721 }, (_, i) => ({
      server_id: s.server.id, resolution: '1h' as const,
      bucket: new Date(start + i * HOUR_MS).toISOString(), stats: JSON.stringify({ cpu_percent: [12, 12 * i, 0, i] }),
    }));
    await t.store.db.insertInto('metric_rollups').values(rows).execute();
    const res = await s.history(`metric=cpu&from=${new Date(start).toISOString()}&to=${new Date(start + 30 * DAY_MS).toISOString()}`);
    assert.equal(res.body.resolution, '1h');
    assert.equal(res.body.series[0].points.length, 720);
    assert.deepEqual(res.body.series[0].points[719], [new Date(start + 719 * HOUR_MS).toISOString(), 719, 0, 719]);
  });

  test('from and to: offsets, a date alone, and only one of them given', async () => {
    const s = await setup(t);
    const offset = await s.history('metric=cpu&from=2026-11-20T12:00:00%2B02:00&to=2026-11-20T12:30:00 02:00');
    assert.equal(offset.status, 200, offset.raw);
    assert.equal(offset.body.from, '2026-11-20T10:00:00.000Z');
    assert.equal(offset.body.to, '2026-11-20T10:30:00.000Z', 'an unencoded + arrives as a space and still counts as +');
    const date = await s.history('metric=cpu&from=2026-11-01&to=2026-11-02T00:00:00.5-01:30');
    assert.deepEqual([date.body.from, date.body.to], ['2026-11-01T00:00:00.000Z', '2026-11-02T01:30:00.500Z']);
    const onlyTo = await s.history('metric=cpu&to=2026-11-20T10:00:00Z');
    assert.deepEqual([onlyTo.body.from, onlyTo.body.to], ['2026-11-20T09:00:00.000Z', '2026-11-20T10:00:00.000Z']);
    const onlyFrom = await s.history(`metric=cpu&from=${ago(t, 3 * HOUR_MS)}`);
    assert.deepEqual([onlyFrom.body.from, onlyFrom.body.to], [ago(t, 3 * HOUR_MS), t.clock.now().toISOString()]);
  });

  test('every bad parameter is 400 validation_failed naming it', async () => {
    const s = await setup(t);
    const range = 'from=2026-11-20T10:00:00Z&to=2026-11-20T11:00:00Z';
    const cases: Array<[string, string]> = [
      [range, 'metric'],
      [`metric=&${range}`, 'metric'],
      [`metric=CPU&${range}`, 'metric'],
      [`metric=load&${range}`, 'metric'],
      [`metric=cpu&${range}&resolution=10m`, 'resolution'],
      [`metric=cpu&${range}&resolution=`, 'resolution'],
      ['metric=cpu&from=yesterday', 'from'],
      ['metric=cpu&from=1700000000', 'from'],
      ['metric=cpu&from=2026-11-20T10:00:00', 'from'],
      ['metric=cpu&from=2026-02-30T10:00:00Z&to=2026-03-05T00:00:00Z', 'from'],
      ['metric=cpu&from=2026-11-20T25:00:00Z', 'from'],
      ['metric=cpu&to=2026-13-01T00:00:00Z', 'to'],
      ['metric=cpu&to=', 'to'],
      ['metric=cpu&from=2026-11-20T11:00:00Z&to=2026-11-20T11:00:00Z', 'from'],
      ['metric=cpu&from=2026-11-20T12:00:00Z&to=2026-11-20T11:00:00Z', 'from'],
      [`metric=cpu&from=${new Date(t.clock.now().getTime() + 60_000).toISOString()}`, 'from'],
      ['metric=cpu&from=2026-11-01T00:00:00Z&to=2026-11-08T00:00:00Z&resolution=1m', 'resolution'],
      ['metric=cpu&from=1900-01-01&to=2026-11-01T00:00:00Z', 'from'],
    ];
    for (const [query, field] of cases) {
      const res = await s.history(query);
      const body = expectEnvelope(res, 400, 'validation_failed');
      assert.ok(body.details.some((d: { field: string }) => d.field === field), `${query}: ${res.raw}`);
    }
    const many = expectEnvelope(await s.history('metric=nope&resolution=2m&from=x'), 400, 'validation_failed');
    assert.deepEqual(many.details.map((d: { field: string }) => d.field), ['metric', 'resolution', 'from'], 'all problems at once');
    assert.match(many.details[0].issue, /cpu, memory, disk, network, temperature/);
    const ok = await s.history('metric=cpu&from=2026-11-01T00:00:00Z&to=2026-11-07T22:40:00Z&resolution=1m');
    assert.equal(ok.status, 200, '10,000 one-minute buckets are still served');
  });

  test('another account\'s server, a trashed one and an unknown id are 404; the request needs a credential', async () => {
    const s = await setup(t);
    const stranger = await registerUser(t);
    const query = 'metric=cpu';
    expectEnvelope(await s.history(query, stranger.token), 404, 'not_found');
    expectEnvelope(await api(t, 'GET', `/api/v1/servers/srv_unknown000000000/health/history?${query}`, { token: s.owner.token }), 404, 'not_found');
    expectEnvelope(await api(t, 'GET', `/api/v1/servers/${s.server.id}/health/history?${query}`), 401, 'unauthorized');
    const reader = await createKey(t, s.owner.token, ['read']);
    assert.equal((await s.history(query, reader.secret)).status, 200);
    await trashServer(t, s.owner.token, s.server.id);
    expectEnvelope(await s.history(query), 404, 'not_found');
  });
});
