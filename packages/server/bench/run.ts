// `npm run bench`: ingest and history on the embedded store, against the ceiling
// of a bare Fastify route under the same load. Prints a table; numbers go to
// docs/benchmarks.md by hand, with the command that produced them.
import autocannon from 'autocannon';
import { mkdtempSync, readFileSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { DAY_MS, MINUTE_MS } from '../src/lib/clock.js';
import { openStore } from '../src/store/db.js';
import { extractMetrics } from '../src/features/health/metrics.js';
import { recordSample } from '../src/features/health/metrics-repo.js';
import { metricsRollupJob } from '../src/jobs/metrics-rollup.js';
import { freePort, rssMiB, serverDir, startProcess } from './processes.js';
import { benchRules } from './rules.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const SERVERS = Number(process.env.BENCH_SERVERS ?? 30_000);
const fixture = readFileSync(join(serverDir, 'test/fixtures/snapshot-vm-debian12.json'), 'utf8');

/** A distinct address per simulated agent (10.0.0.0/8 holds 16 million). */
const agentAddress = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;

interface Load { rate: number; p50: number; p99: number; ok: number; other: number }

async function load(options: autocannon.Options): Promise<Load> {
  const result = await autocannon({ connections: CONNECTIONS, duration: SECONDS, ...options });
  return {
    // Answers over the whole run; with `amount` the run ends when the last one is in, not on a whole second.
    rate: result.requests.total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    ok: result['2xx'],
    other: result.non2xx + result.errors + result.timeouts,
  };
}

let calls = 0;

async function json(origin: string, path: string, body: unknown, token?: string): Promise<any> {
  const res = await fetch(`${origin}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': agentAddress(calls++), ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** Registers `count` servers, 16 at a time; returns their collector keys and ids. */
async function registerServers(origin: string, token: string, count: number) {
  const servers: { id: string; key: string }[] = [];
  let next = 0;
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (next < count) {
      next += 1;
      const res = await json(origin, '/api/v1/servers', { tags: ['bench'] }, token);
      servers.push({ id: res.server.id, key: res.server.api_key });
    }
  }));
  return servers;
}

function storeBytes(dataDir: string): number {
  return ['kiln.sqlite', 'kiln.sqlite-wal'].map((f) => join(dataDir, f)).filter(existsSync).reduce((sum, f) => sum + statSync(f).size, 0);
}

function checkpoint(dataDir: string): void {
  const db = new SQLite(join(dataDir, 'kiln.sqlite'));
  db.pragma('busy_timeout = 5000');
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

/** Thirty days of five-minute samples for one server, written the way ingest writes them, then rolled up as the service's job does. */
async function fillHistory(dataDir: string, serverId: string): Promise<number> {
  const store = openStore({ databaseUrl: null, dataDir });
  const base = extractMetrics(JSON.parse(fixture));
  const end = Date.now();
  let count = 0;
  for (let t = end - 30 * DAY_MS; t < end; t += 5 * MINUTE_MS) {
    const wave = Math.sin(t / DAY_MS * 2 * Math.PI);
    const values = { ...base, cpu_percent: 40 + 30 * wave, ram_percent: 60 + 10 * wave };
    await recordSample(store.db, serverId, new Date(t), values);
    count += 1;
  }
  // The job only rolls forward, and the service's own run has already passed these past buckets: roll them as on a new store.
  await store.db.deleteFrom('metric_rollup_progress').execute();
  await metricsRollupJob(store).run(new Date());
  await store.close();
  return count;
}

async function waitForHealth(origin: string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    try {
      if ((await fetch(`${origin}/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${origin} did not become healthy`);
}

const fmt = (n: number, digits = 1) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

async function main() {
  console.log(`kiln bench: ${SECONDS} s per run, ${CONNECTIONS} connections, ${SERVERS} servers, body ${fixture.length} bytes`);
  const ingestRequest = { method: 'POST' as const, path: '/api/v1/ingest', headers: { 'content-type': 'application/json' }, body: fixture };

  // 1. The ceiling: the same load against a route that only parses JSON.
  const ceilingServer = await startProcess('bench/ceiling-server.ts', {}, /listening (http:\/\/\S+)/);
  await load({ url: ceilingServer.origin, duration: 2, requests: [ingestRequest] });
  const ceiling = await load({ url: ceilingServer.origin, requests: [ingestRequest] });
  await ceilingServer.stop();

  // 2. Kiln on its embedded store, started as users start it.
  const dataDir = mkdtempSync(join(tmpdir(), 'kiln-bench-'));
  const port = await freePort();
  const kiln = await startProcess('src/main.ts', { PORT: String(port), DATA_DIR: dataDir, DATABASE_URL: '', TRUST_PROXY: 'true',
    // One account registering 30,000 servers and querying history flat out stands in for thousands of
    // accounts: its own tiers are lifted; per IP and per collector key keep the spec's limits.
    RATE_LIMITS: 'server-create:1000000:1000000/s,key:1000000:1000000/s,account:1000000:1000000/s', LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info' }, null);
  kiln.origin = `http://127.0.0.1:${port}`;
  await waitForHealth(kiln.origin);
  try {
    const { token } = await json(kiln.origin, '/api/v1/auth/register', { email: 'bench@example.com', password: 'benchmark password' });
    const started = Date.now();
    const servers = await registerServers(kiln.origin, token, SERVERS);
    console.log(`registered ${servers.length} servers in ${fmt((Date.now() - started) / 1000)} s`);
    checkpoint(dataDir);
    const bytesBefore = storeBytes(dataDir);

    // Each simulated server pushes from its own address, as agents do; the
    // service trusts X-Forwarded-For here, so the per-IP tier sees one agent each.
    const pushAs = (i: number) => (request: autocannon.Request) => ({
      ...request,
      headers: { ...request.headers, authorization: `Bearer ${servers[i % servers.length]!.key}`, 'x-forwarded-for': agentAddress(i % servers.length) },
    });

    // First pushes: every server's first snapshot, which raises the fixture's
    // alerts (no_firewall, unattended_upgrades_disabled) with their outbox rows.
    let first = 0;
    const warmUp = await load({
      url: kiln.origin, amount: servers.length,
      requests: [{ ...ingestRequest, setupRequest: (request) => pushAs(first++)(request) }],
    });
    // Steady state: the same servers again once their 55-second gate has
    // opened, each once: BENCH_SECONDS or all servers, whichever ends first.
    await new Promise((resolve) => setTimeout(resolve, 56_000));
    let turn = 0;
    const ingest = await load({
      url: kiln.origin,
      maxOverallRequests: servers.length,
      requests: [{ ...ingestRequest, setupRequest: (request) => pushAs(turn++)(request) }],
    });
    const rss = rssMiB(kiln.child.pid!);
    if (turn > servers.length) console.log(`note: ${turn} pushes for ${servers.length} servers; some hit the 55 s gate`);
    checkpoint(dataDir);
    const bytesPerSnapshot = (storeBytes(dataDir) - bytesBefore) / Math.max(warmUp.ok + ingest.ok, 1);

    // 3. History over 24 hours and 30 days for a server with 30 days of data.
    const historyServer = servers[0]!.id;
    const samples = await fillHistory(dataDir, historyServer);
    const now = Date.now();
    const history = async (days: number) => load({
      url: kiln.origin,
      requests: [{
        method: 'GET',
        path: `/api/v1/servers/${historyServer}/health/history?metric=cpu&from=${new Date(now - days * DAY_MS).toISOString()}&to=${new Date(now).toISOString()}`,
        headers: { authorization: `Bearer ${token}` },
        setupRequest: (request) => ({ ...request, headers: { ...request.headers, 'x-forwarded-for': agentAddress(calls++) } }),
      }],
      connections: 1, // one client at a time: the latency of a query, not of a queue
    });
    const day = await history(1);
    const month = await history(30);

    const rows: [string, string][] = [
      ['ceiling (bare Fastify, JSON parse only)', `${fmt(ceiling.rate, 0)} req/s, p50 ${ceiling.p50} ms, p99 ${ceiling.p99} ms`],
      ['ingest, first snapshot of each server (raises 2 alerts)', `${fmt(warmUp.rate, 0)} snapshots/s, p50 ${warmUp.p50} ms, p99 ${warmUp.p99} ms (${warmUp.ok} accepted, ${warmUp.other} other)`],
      ['ingest sustained (steady state)', `${fmt(ingest.rate, 0)} snapshots/s (${ingest.ok} accepted, ${ingest.other} other)`],
      ['ingest latency', `p50 ${ingest.p50} ms, p99 ${ingest.p99} ms`],
      ['ingest / ceiling', `${fmt((ingest.rate / ceiling.rate) * 100)} %`],
      ['service RSS after ingest', `${fmt(rss)} MiB`],
      ['store bytes per snapshot', `${fmt(bytesPerSnapshot, 0)} B`],
      [`history 24 h (${samples} samples in 30 d)`, `p50 ${day.p50} ms, p99 ${day.p99} ms, ${fmt(day.rate, 0)} req/s${day.other ? `, ${day.other} failed` : ''}`],
      ['history 30 days', `p50 ${month.p50} ms, p99 ${month.p99} ms, ${fmt(month.rate, 0)} req/s${month.other ? `, ${month.other} failed` : ''}`],
    ];
    // 4. The alert rules alone, in this process (the service is idle by now).
    rows.push(...await benchRules());
    console.log('\n| measure | result |\n|---|---|');
    for (const [name, value] of rows) console.log(`| ${name} | ${value} |`);
    if (warmUp.other > 0 || ingest.other > 0 || day.other > 0 || month.other > 0) process.exitCode = 1;
  } finally {
    await kiln.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
