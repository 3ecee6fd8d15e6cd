// Ingest in-process through app.inject, for `node --cpu-prof`: where one push spends its time.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { logRedaction } from '../src/lib/log.js';
import type { Clock } from '../src/lib/clock.js';
import { logMailer } from '../src/lib/mailer.js';
import { openStore } from '../src/store/db.js';
import { migrateToLatest } from '../src/store/migrate.js';
import { serverDir } from './processes.js';

const COUNT = Number(process.env.PROFILE_PUSHES ?? 5000);
/** Pushes in flight at once; above 1 they share group commits as under real load. */
const CONCURRENCY = Number(process.env.PROFILE_CONCURRENCY ?? 1);
const dataDir = mkdtempSync(join(tmpdir(), 'kiln-profile-'));
// The limiter is measured on its own (bench/limiter.ts); here every push comes from one address.
const config = loadConfig({ DATA_DIR: dataDir, RATE_LIMITS_ENABLED: 'false' });
const store = openStore({ databaseUrl: null, dataDir });
await migrateToLatest(store);
// Logs as the service writes them (PROFILE_LOG_LEVEL=info is the default of main.ts), to /dev/null.
const logger = pino({ level: process.env.PROFILE_LOG_LEVEL ?? 'warn', redact: logRedaction }, pino.destination('/dev/null'));
// Real time, plus a jump past the 55-second gate between the two passes.
let skewMs = 0;
const clock: Clock = { now: () => new Date(Date.now() + skewMs) };
const app = await buildApp({ config, store, clock, mailer: logMailer(logger), logger, fetch });
const body = readFileSync(join(serverDir, 'test/fixtures/snapshot-vm-debian12.json'), 'utf8');
const post = (url: string, payload: unknown, token?: string) => app.inject({
  method: 'POST', url, payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
  headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
});
const { token } = (await post('/api/v1/auth/register', { email: 'p@example.com', password: 'profile password' })).json();
const keys: string[] = [];
for (let i = 0; i < COUNT; i++) keys.push((await post('/api/v1/servers', {}, token)).json().server.api_key);
async function pass(): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < keys.length) {
      const res = await post('/api/v1/ingest', body, keys[next++]!);
      if (res.statusCode !== 200) throw new Error(res.body);
    }
  }));
}
// The first push of a server raises the fixture's alerts; the profiled pass is
// the steady state that follows, where they are already active.
await pass();
skewMs += 56_000;
const session = new Session();
const profileTo = process.env.PROFILE_OUT;
if (profileTo) {
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
}
const started = process.hrtime.bigint();
const cpuBefore = process.cpuUsage();
await pass();
const us = Number(process.hrtime.bigint() - started) / 1000 / COUNT;
// CPU time is steadier than wall time on a shared machine.
const cpu = process.cpuUsage(cpuBefore);
const cpuUs = (cpu.user + cpu.system) / COUNT;
if (profileTo) {
  const { profile } = await session.post('Profiler.stop');
  writeFileSync(profileTo, JSON.stringify(profile));
}
console.log(`${COUNT} pushes, ${us.toFixed(0)} µs each, ${cpuUs.toFixed(0)} µs CPU (user ${(cpu.user / COUNT).toFixed(0)}, system ${(cpu.system / COUNT).toFixed(0)}) (in-process, ${CONCURRENCY} in flight)`);
await app.close();
await store.close();
