import assert from 'node:assert/strict';
import pg from 'pg';
import { STORE_RETRY_AFTER_SECONDS } from '../../src/store/errors.js';
import { PASSWORD, api, expectEnvelope, uniqueEmail, type ApiResponse, type TestApp, type TestUser } from './app.js';
import { hostSnapshot } from './alerts.js';
import { push } from './ingest.js';
import type { RegisteredServer } from './servers.js';

/** The 503 of a store outage: the envelope, retryable, Retry-After, and nothing about the store in the body. */
export function expectUnavailable(res: ApiResponse, what = 'request'): void {
  const envelope = expectEnvelope(res, 503, 'unavailable');
  assert.equal(envelope.retryable, true, what);
  assert.equal(envelope.retry_after_seconds, STORE_RETRY_AFTER_SECONDS, what);
  assert.equal(res.headers['retry-after'], String(STORE_RETRY_AFTER_SECONDS), what);
  assert.doesNotMatch(res.raw, /insert|update|select|delete|sqlite|econn|terminat|57P0|timeout/i, `${what}: the body tells nothing of the store`);
}

/** A snapshot that raises alerts (firewall off, root disk at 97 %), so ingest writes alerts and outbox rows too. */
export function alertingSnapshot(t: TestApp): Record<string, unknown> {
  return hostSnapshot(t, { uptime: 86_400, firewall: false, disks: [{ mount: '/', percent_used: 97 }] });
}

/**
 * The three writes the fault tests interrupt, each the same request every
 * time it is sent: an account registration, a server registration (with
 * tags, so two tables) and a snapshot push (server claim, alerts, latest
 * snapshot, history sample).
 */
export function writeRequests(t: TestApp, owner: TestUser, server: RegisteredServer) {
  const email = uniqueEmail('fault');
  const name = `fault-${email.slice(6, 16)}`;
  return {
    register: () => api(t, 'POST', '/api/v1/auth/register', { body: { email, password: PASSWORD, name: 'Fault' } }),
    createServer: () => api(t, 'POST', '/api/v1/servers', { token: owner.token, body: { name, tags: ['fault', 'outage'] } }),
    ingest: () => push(t, server.api_key, alertingSnapshot(t)),
  };
}

/** What each write answers once the store is back. */
export const WRITE_SUCCESS = { register: 201, createServer: 201, ingest: 200 } as const;

/** Ends every connection of one database from an admin connection, as a PostgreSQL restart ends live ones (57P01). */
export async function terminateBackends(databaseUrl: string): Promise<number> {
  const database = new URL(databaseUrl).pathname.slice(1);
  const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await admin.connect();
  try {
    const result = await admin.query(
      'select pg_terminate_backend(pid) as ended from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [database]);
    return result.rows.filter((row) => row.ended === true).length;
  } finally {
    await admin.end();
  }
}

/** Log lines at warn (pino level 40) with the given message. */
export function warnings(logs: string[], message: string): string[] {
  return logs.filter((line) => line.includes('"level":40') && line.includes(message));
}
