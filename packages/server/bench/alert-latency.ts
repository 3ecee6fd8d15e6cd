// `npx tsx bench/alert-latency.ts`: how long after an ingest that raises an
// alert the user's webhook has it, with the service process and its real
// scheduler (delivery worker every 2 s). Prints median and p95 over
// BENCH_ALERTS servers (default 40), each pushing one snapshot with the
// firewall off.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startProcess } from './processes.js';

const ALERTS = Number(process.env.BENCH_ALERTS ?? 40);
// Pushes are spread out at a spacing unrelated to the worker's 2 s tick, so they land at every phase of it.
const SPACING_MS = 173;

async function json(origin: string, path: string, body: unknown, token?: string): Promise<any> {
  const res = await fetch(`${origin}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

async function waitForHealth(origin: string): Promise<void> {
  for (;;) {
    try {
      if ((await fetch(`${origin}/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

function snapshot(hostname: string): Record<string, unknown> {
  return {
    timestamp: new Date().toISOString(),
    collector_version: '0.10.1',
    system: { hostname, os: 'Debian GNU/Linux 12 (bookworm)', os_id: 'debian', uptime_seconds: 86_400 },
    cpu: { idle_percent: 97, iowait_percent: 0, load_1m: 0.2, cores: [{ core: 0 }, { core: 1 }] },
    memory: { total_mb: 8000, used_mb: 2000, available_mb: 6000, swap_total_mb: 0, swap_used_mb: 0 },
    disks: [{ device: '/dev/sda1', fstype: 'ext4', mount: '/', percent_used: 40 }],
    os_alerts: { oom_kills_recent: 0, zombie_processes: 0, time_drift_ms: 0 },
    security: { firewall: { active: false, source: 'nftables' }, auto_updates: { configured: true, mechanism: 'unattended-upgrades' } },
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function main(): Promise<void> {
  const received = new Map<string, number>();
  let allArrived: () => void = () => {};
  const done = new Promise<void>((resolve) => (allArrived = resolve));
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      received.set(body.data.server.id, at);
      res.writeHead(204).end();
      if (received.size === ALERTS) allArrived();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

  const dataDir = mkdtempSync(join(tmpdir(), 'kiln-latency-'));
  const port = await freePort();
  // Loopback receiver: private targets allowed. The limiter is off: the script registers and pushes faster than one client may.
  const kiln = await startProcess('src/main.ts', {
    PORT: String(port), DATA_DIR: dataDir, DATABASE_URL: process.env.BENCH_DATABASE_URL ?? '',
    ALLOW_PRIVATE_TARGETS: 'true', RATE_LIMITS_ENABLED: 'false', LOG_LEVEL: 'warn',
  }, null);
  const origin = `http://127.0.0.1:${port}`;
  try {
    await waitForHealth(origin);
    const { token } = await json(origin, '/api/v1/auth/register', { email: 'latency@example.com', password: 'benchmark password' });
    await json(origin, '/api/v1/channels', { name: 'bench hook', channel_type: 'webhook', config: { url: hook } }, token);
    const servers: Array<{ id: string; key: string }> = [];
    for (let i = 0; i < ALERTS; i++) {
      const res = await json(origin, '/api/v1/servers', { name: `latency-${i}` }, token);
      servers.push({ id: res.server.id, key: res.server.api_key });
    }
    const answered = new Map<string, number>();
    for (const [i, server] of servers.entries()) {
      const res = await json(origin, '/api/v1/ingest', snapshot(`latency-${i}`), server.key);
      if (res.new_alerts !== 1) throw new Error(`expected one new alert, got ${JSON.stringify(res)}`);
      answered.set(server.id, Date.now());
      await new Promise((r) => setTimeout(r, SPACING_MS));
    }
    const timeout = setTimeout(() => allArrived(), 30_000);
    await done;
    clearTimeout(timeout);
    const latencies = servers.flatMap((s) => {
      const at = received.get(s.id);
      return at === undefined ? [] : [at - answered.get(s.id)!];
    }).sort((a, b) => a - b);
    console.log(`alerts ${ALERTS}, delivered ${latencies.length}`);
    console.log(`ingest answer → webhook received: median ${percentile(latencies, 50)} ms, p95 ${percentile(latencies, 95)} ms, min ${latencies[0]} ms, max ${latencies.at(-1)} ms`);
  } finally {
    await kiln.stop();
    receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
