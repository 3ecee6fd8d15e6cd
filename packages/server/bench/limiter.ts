// `node --import tsx packages/server/bench/limiter.ts`: what the rate limiter
// costs per request. Starts the service (src/main.ts, its own process, fresh
// embedded store) with the limiter off, in memory, and on Redis when
// REDIS_URL is set, and loads a public route and an authenticated one with
// autocannon. Limits are raised so that no request is refused: the full
// check-and-debit runs on every request and is what gets measured. Each
// request comes from one of 10,000 client addresses (TRUST_PROXY=true with
// X-Forwarded-For), as many agents would. The overhead is the service
// process's CPU time per request (from /proc, so a load generator or another
// process competing for the cores does not inflate it) with the limiter on,
// minus the same with it off; rates and latencies are printed beside it.
import autocannon from 'autocannon';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { Bucket, Limiter } from '../src/http/rate-limit/limiter.js';
import { memoryLimiter } from '../src/http/rate-limit/memory-limiter.js';
import { redisLimiter } from '../src/http/rate-limit/redis-limiter.js';
import { bucketsFor, DEFAULT_TIERS } from '../src/http/rate-limit/tiers.js';
import { freePort, startProcess } from './processes.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const ADDRESSES = 10_000;
const HUGE = 'ip:1000000000:1000000000/s,key:1000000000:1000000000/s,account:1000000000:1000000000/s';

type Mode = 'off' | 'memory' | 'redis';
interface Run { rate: number; p50: number; p99: number; non2xx: number; cpuUs: number }

/** User + system CPU time of a process in µs (Linux; clock ticks of 10 ms). */
function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
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

async function post(origin: string, path: string, body: unknown, token?: string): Promise<any> {
  const res = await fetch(`${origin}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

async function load(pid: number, url: string, headers: Record<string, string>, seconds: number): Promise<Run> {
  let turn = 0;
  const cpuBefore = cpuMicros(pid);
  const result = await autocannon({
    url, connections: CONNECTIONS, duration: seconds,
    requests: [{
      method: 'GET',
      setupRequest: (request) => {
        const n = turn++ % ADDRESSES;
        return { ...request, headers: { ...headers, 'x-forwarded-for': `10.${n >> 16}.${(n >> 8) & 255}.${n & 255}` } };
      },
    }],
  });
  const cpuUs = (cpuMicros(pid) - cpuBefore) / Math.max(1, result.requests.total);
  return { rate: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx + result.errors, cpuUs };
}

async function measure(mode: Mode): Promise<{ public: Run; authenticated: Run }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'kiln-limiter-bench-'));
  const port = await freePort();
  const env: Record<string, string> = {
    PORT: String(port), DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'warn', TRUST_PROXY: 'true',
    RATE_LIMITS_ENABLED: mode === 'off' ? 'false' : 'true', RATE_LIMITS: HUGE, REDIS_URL: mode === 'redis' ? process.env.REDIS_URL! : '',
  };
  const kiln = await startProcess('src/main.ts', env, null);
  const origin = `http://127.0.0.1:${port}`;
  try {
    await waitForHealth(origin);
    const { token } = await post(origin, '/api/v1/auth/register', { email: 'bench@example.com', password: 'benchmark password' });
    const { secret } = await post(origin, '/api/v1/account/keys', { name: 'bench', scopes: ['read'] }, token);
    const pid = kiln.child.pid!;
    await load(pid, `${origin}/healthz`, {}, 2);
    const pub = await load(pid, `${origin}/healthz`, {}, SECONDS);
    const authHeaders = { authorization: `Bearer ${secret}` };
    await load(pid, `${origin}/api/v1/account/keys`, authHeaders, 2);
    const auth = await load(pid, `${origin}/api/v1/account/keys`, authHeaders, SECONDS);
    return { public: pub, authenticated: auth };
  } finally {
    await kiln.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const modes: Mode[] = ['off', 'memory', ...(process.env.REDIS_URL ? ['redis' as const] : [])];
console.log(`limiter bench: ${SECONDS} s per load, ${CONNECTIONS} connections, ${ROUNDS} rounds, modes ${modes.join(', ')}`);
const results = new Map<Mode, { public: Run[]; authenticated: Run[] }>(modes.map((m) => [m, { public: [], authenticated: [] }]));
for (let round = 0; round < ROUNDS; round++) {
  // Alternating order spreads drift (thermal, other load) over every mode.
  for (const mode of round % 2 ? [...modes].reverse() : modes) {
    const run = await measure(mode);
    results.get(mode)!.public.push(run.public);
    results.get(mode)!.authenticated.push(run.authenticated);
    console.log(`round ${round + 1} ${mode}: public ${run.public.rate.toFixed(0)} req/s ${run.public.cpuUs.toFixed(1)} µs CPU, `
      + `authenticated ${run.authenticated.rate.toFixed(0)} req/s ${run.authenticated.cpuUs.toFixed(1)} µs CPU`);
  }
}

// The median of the rounds: one round disturbed by another process on the machine does not move it.
const median = (runs: Run[], pick: (r: Run) => number) => {
  const values = runs.map(pick).sort((a, b) => a - b);
  const mid = values.length >> 1;
  return values.length % 2 ? values[mid]! : (values[mid - 1]! + values[mid]!) / 2;
};
console.log('\n| route | limiter | CPU µs per request (median) | overhead vs off | req/s (median) | p50 / p99 ms | refused or failed |\n|---|---|---|---|---|---|---|');
for (const route of ['public', 'authenticated'] as const) {
  const off = median(results.get('off')![route], (r) => r.cpuUs);
  for (const mode of modes) {
    const runs = results.get(mode)![route];
    const cpu = median(runs, (r) => r.cpuUs);
    const overhead = mode === 'off' ? '' : `${cpu - off >= 0 ? '+' : ''}${(cpu - off).toFixed(1)} µs`;
    const latency = `${median(runs, (r) => r.p50).toFixed(1)} / ${median(runs, (r) => r.p99).toFixed(1)}`;
    const name = route === 'public' ? 'GET /healthz' : 'GET /api/v1/account/keys (account key)';
    console.log(`| ${name} | ${mode} | ${cpu.toFixed(1)} | ${overhead} | ${median(runs, (r) => r.rate).toFixed(0)} | ${latency} | ${runs.reduce((n, r) => n + r.non2xx, 0)} |`);
  }
}

/** One limiter call alone, in this process: the floor under the figures above. 16 calls in flight, as under load. */
async function perCall(limiter: Limiter, buckets: (n: number) => Bucket[]) {
  const calls = 20_000;
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < calls; i += 16) {
    await Promise.all(Array.from({ length: 16 }, (_, j) => limiter.take(buckets(i + j), 1, Date.now())));
  }
  const used = process.cpuUsage(cpu);
  return { cpu: (used.user + used.system) / calls, wall: ((performance.now() - started) * 1000) / calls };
}

const roomy = bucketsFor({ ...DEFAULT_TIERS, ip: { capacity: 1e9, refillPerSecond: 1e9 }, key: { capacity: 1e9, refillPerSecond: 1e9 }, account: { capacity: 1e9, refillPerSecond: 1e9 } });
const publicCall = (n: number) => [roomy.ip(`10.0.${(n % ADDRESSES) >> 8}.${n & 255}`)];
const credentialCall = () => [roomy.credential('key_bench'), roomy.account('acc_bench')];
const floors: [string, Limiter, Redis | null][] = [['memory', memoryLimiter(), null]];
if (process.env.REDIS_URL) {
  const redis = new Redis(process.env.REDIS_URL, { enableAutoPipelining: true });
  floors.push(['redis', redisLimiter({ redis, prefix: `kiln-bench:${process.pid}:` }), redis]);
}
console.log('\n| one limiter call | buckets | CPU µs per call | wall µs per call |\n|---|---|---|---|');
for (const [name, limiter, redis] of floors) {
  await perCall(limiter, publicCall);
  for (const [label, make] of [['per-IP', publicCall], ['credential + account', credentialCall]] as const) {
    const { cpu, wall } = await perCall(limiter, make);
    console.log(`| ${name} | ${label} | ${cpu.toFixed(1)} | ${wall.toFixed(1)} |`);
  }
  if (redis) {
    for await (const keys of redis.scanStream({ match: `kiln-bench:${process.pid}:*`, count: 1000 })) {
      if ((keys as string[]).length > 0) await redis.del(...(keys as string[]));
    }
    await redis.quit();
  }
}
