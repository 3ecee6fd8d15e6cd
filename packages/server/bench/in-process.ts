// In-process ingest for the profiling benches: the service built by buildApp
// on a fresh SQLite store, one account with `count` servers, and a pass that
// pushes the real agent payload once for every server through app.inject.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import type { Clock } from '../src/lib/clock.js';
import { logRedaction } from '../src/lib/log.js';
import { logMailer } from '../src/lib/mailer.js';
import { openStore } from '../src/store/db.js';
import { migrateToLatest } from '../src/store/migrate.js';
import { serverDir } from './processes.js';

export async function inProcessIngest(options: { count: number; concurrency: number; logLevel: string }) {
  const dataDir = mkdtempSync(join(tmpdir(), 'kiln-profile-'));
  // The limiter is measured on its own (bench/limiter.ts); here every push comes from one address.
  const config = loadConfig({ DATA_DIR: dataDir, RATE_LIMITS_ENABLED: 'false' });
  const store = openStore({ databaseUrl: null, dataDir });
  await migrateToLatest(store);
  // Logs as the service writes them (info is the default of main.ts), to /dev/null.
  const logger = pino({ level: options.logLevel, redact: logRedaction }, pino.destination('/dev/null'));
  // Real time, plus a jump past the 55-second gate before each pass after the first.
  let skewMs = 0;
  const clock: Clock = { now: () => new Date(Date.now() + skewMs) };
  const app = await buildApp({ config, store, clock, mailer: logMailer(logger), logger, fetch });
  const body = readFileSync(join(serverDir, 'test/fixtures/snapshot-vm-debian12.json'), 'utf8');
  const post = (url: string, payload: string, token?: string) => app.inject({
    method: 'POST', url, payload,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
  });
  const { token } = (await post('/api/v1/auth/register', JSON.stringify({ email: 'p@example.com', password: 'profile password' }))).json();
  const keys: string[] = [];
  for (let i = 0; i < options.count; i++) keys.push((await post('/api/v1/servers', '{}', token)).json().server.api_key);
  let passes = 0;

  return {
    dataDir,
    body,
    /** Pushes once for every server, `concurrency` at a time (they share group commits as under real load). */
    async pass(): Promise<void> {
      if (passes++ > 0) skewMs += 56_000;
      let next = 0;
      await Promise.all(Array.from({ length: options.concurrency }, async () => {
        while (next < keys.length) {
          const res = await post('/api/v1/ingest', body, keys[next++]!);
          if (res.statusCode !== 200) throw new Error(res.body);
        }
      }));
    },
    async close(): Promise<void> {
      await app.close();
      await store.close();
    },
  };
}
