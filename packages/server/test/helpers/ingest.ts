import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { api, registerUser, type ApiResponse, type TestApp, type TestUser } from './app.js';
import { createServer, type RegisteredServer } from './servers.js';

export const FIXTURES = ['snapshot-vm-debian12.json', 'snapshot-baremetal.json', 'snapshot-large-host.json'] as const;
export type FixtureName = (typeof FIXTURES)[number];

/** A fixture's text exactly as committed. */
export function fixtureText(name: FixtureName): string {
  return readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8');
}

export function fixture(name: FixtureName): any {
  return JSON.parse(fixtureText(name));
}

/** The smallest snapshot ingest accepts, plus whatever `extra` adds. */
export function minimalSnapshot(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { timestamp: '2026-11-22T12:00:00.000Z', system: {}, ...extra };
}

export interface PushOptions {
  /** Default: `Bearer <key>`; null sends no Authorization header. */
  authorization?: string | null;
  headers?: Record<string, string>;
}

/** POST /ingest with a body given as an object (serialised), a JSON text, or bytes sent as they are. */
export async function push(t: TestApp, key: string, body: unknown, options: PushOptions = {}): Promise<ApiResponse> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
  const authorization = options.authorization === undefined ? `Bearer ${key}` : options.authorization;
  if (authorization !== null) headers.authorization = authorization;
  const payload = Buffer.isBuffer(body) ? body : typeof body === 'string' ? body : JSON.stringify(body);
  const response = await t.app.inject({ method: 'POST', url: '/api/v1/ingest', headers, payload });
  let parsed: any = response.body;
  try {
    parsed = response.body ? JSON.parse(response.body) : null;
  } catch {
    // not JSON: keep the text
  }
  return { status: response.statusCode, body: parsed, headers: response.headers, raw: response.body };
}

export function pushGzip(t: TestApp, key: string, text: string | Buffer, encoding = 'gzip'): Promise<ApiResponse> {
  return push(t, key, gzipSync(text), { headers: { 'content-encoding': encoding } });
}

export interface Reporter {
  user: TestUser;
  server: RegisteredServer;
  key: string;
}

/** A fresh account with one registered server (placeholder name unless `body` names it). */
export async function reporter(t: TestApp, body: Record<string, unknown> = {}, user?: TestUser): Promise<Reporter> {
  const owner = user ?? await registerUser(t);
  const server = await createServer(t, owner.token, body);
  return { user: owner, server, key: server.api_key };
}

export function serverRow(t: TestApp, id: string) {
  return t.store.db.selectFrom('servers').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

export function latestRow(t: TestApp, id: string) {
  return t.store.db.selectFrom('latest_snapshots').selectAll().where('server_id', '=', id).executeTakeFirst();
}

export async function sampleCount(t: TestApp, id: string): Promise<number> {
  return (await t.store.db.selectFrom('metric_samples').select('ts').where('server_id', '=', id).execute()).length;
}

export async function getServer(t: TestApp, r: Reporter): Promise<any> {
  const res = await api(t, 'GET', `/api/v1/servers/${r.server.id}`, { token: r.user.token });
  if (res.status !== 200) throw new Error(`GET server failed: ${res.status} ${res.raw}`);
  return res.body;
}

/** Moves the shared fake clock past the 55-second gate. */
export function pastGate(t: TestApp): void {
  t.clock.advance(55_000);
}
