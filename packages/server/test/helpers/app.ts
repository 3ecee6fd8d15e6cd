import { after, before, describe } from 'node:test';
import { Writable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { BUNDLED_AGENT_VERSION, type Config } from '../../src/config.js';
import { logRedaction } from '../../src/lib/log.js';
import { logMailer, type Mailer } from '../../src/lib/mailer.js';
import type { Limiter } from '../../src/http/rate-limit/limiter.js';
import { DEFAULT_TIERS } from '../../src/http/rate-limit/tiers.js';
import type { Dialect, Store } from '../../src/store/db.js';
import { redisSharedState, storeSharedState, type SharedState } from '../../src/shared-state.js';
import { FakeClock } from './clock.js';
import { SKIP_REDIS, TestRedis } from './limiters.js';
import { createTestStore, storeKinds, type TestStoreOptions } from './stores.js';

export interface TestApp {
  kind: Dialect;
  app: FastifyInstance;
  store: Store;
  /** Where the store is: see TestStore.location. */
  location: string;
  clock: FakeClock;
  config: Config;
  /** Every log line the app wrote, as text. */
  logs: string[];
  /** Idempotency keys and the ingest gate, as the app was given them. */
  shared: SharedState;
  /** Where `shared` lives when the app was started with `redis: true`. */
  redis: TestRedis | null;
  close(): Promise<void>;
}

export interface TestAppOptions {
  config?: Partial<Config>;
  mailer?: (logger: pino.Logger) => Mailer;
  fetch?: typeof fetch;
  /** Default: a fresh in-memory limiter per app. */
  limiter?: Limiter;
  /** How the store is opened (fault tests: a short busy timeout, a proxy in front of PostgreSQL). */
  store?: TestStoreOptions;
  /** Keep idempotency keys and the ingest gate in Redis (TEST_REDIS_URL) under a prefix of this app's own, deleted on close. */
  redis?: boolean;
}

export function testConfig(overrides: Partial<Config> = {}): Config {
  return {
    port: 0,
    host: '127.0.0.1',
    dataDir: '',
    databaseUrl: null,
    sqliteBusyTimeoutMs: 5_000,
    redisUrl: null,
    publicUrl: null,
    secretKey: 'test-secret-key-that-is-long-enough-0123456789',
    smtpUrl: null,
    mailFrom: 'Kiln <kiln@test.invalid>',
    trustProxy: false,
    corsOrigins: [],
    // The spec's limits, on: suites stay under them because api() gives each request its own address.
    rateLimits: { enabled: true, tiers: { ...DEFAULT_TIERS } },
    logLevel: 'info',
    agentRegistryUrl: null,
    agentPackage: null,
    agentChangelogUrl: null,
    minAgentVersion: '0.1.0',
    bundledAgentVersion: BUNDLED_AGENT_VERSION,
    retention: { rawDays: 7, fiveMinuteDays: 30, hourDays: 400, dayDays: 1825 },
    // Channels in tests deliver to receivers on loopback; nothing here points at a real service.
    delivery: {
      allowPrivateTargets: true,
      telegramApiUrl: 'http://127.0.0.1:9/telegram-unset',
      pagerdutyEventsUrl: 'http://127.0.0.1:9/pagerduty-unset',
      timeoutMs: 5_000,
    },
    ...overrides,
  };
}

export async function startApp(kind: Dialect, options: TestAppOptions = {}): Promise<TestApp> {
  const { store, location, dispose } = await createTestStore(kind, options.store);
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const logger = pino({ level: 'info', redact: logRedaction }, sink);
  const mailer = options.mailer ? options.mailer(logger) : logMailer(logger);
  const clock = new FakeClock();
  const config = testConfig(options.config);
  const redis = options.redis ? new TestRedis() : null;
  const shared = redis ? redisSharedState({ redis: redis.redis, prefix: redis.prefix, db: store.db, logger }) : storeSharedState(store.db);
  const app = await buildApp({ config, store, clock, mailer, logger, fetch: options.fetch ?? globalThis.fetch, limiter: options.limiter, shared });
  await app.ready();
  return {
    kind, app, store, location, clock, config, logs, shared, redis,
    async close() {
      await app.close();
      await mailer.close();
      await redis?.dispose();
      await dispose();
    },
  };
}

/**
 * Runs a suite once per store (SQLite, and PostgreSQL when TEST_DATABASE_URL
 * is set), each against its own fresh, migrated store. With `redis: true`
 * the suites are skipped, and say why, when TEST_REDIS_URL is unset.
 */
export function describeEachStore(title: string, body: (t: TestApp) => void, options: TestAppOptions = {}): void {
  for (const kind of storeKinds()) {
    describe(`${title} [${kind}]`, { skip: options.redis ? SKIP_REDIS : false }, () => {
      const t = { kind } as TestApp;
      before(async () => {
        Object.assign(t, await startApp(kind, options));
      });
      after(async () => {
        await t.close();
      });
      body(t);
    });
  }
}

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Record<string, string | string[] | number | undefined>;
  raw: string;
}

let clientCounter = 0;

/**
 * A fresh client address (198.18.0.0/15, the benchmarking range) for each
 * request, unless a test names one. Suites keep the real rate limits, and
 * with a fake clock that stands still, the per-IP tier (100 requests, 10/s)
 * would otherwise end every suite after its hundredth request from the one
 * address inject uses. The per-IP tests pass `ip` explicitly.
 */
export function nextClientAddress(): string {
  const n = clientCounter++ % 131_072;
  return `198.${18 + (n >> 16)}.${(n >> 8) & 255}.${n & 255}`;
}

export async function api<T = any>(
  t: { app: FastifyInstance },
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD' | 'OPTIONS',
  url: string,
  options: { token?: string; body?: unknown; headers?: Record<string, string>; rawBody?: string; ip?: string } = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let payload: string | undefined;
  if (options.rawBody !== undefined) payload = options.rawBody;
  else if (options.body !== undefined) {
    payload = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await t.app.inject({ method, url, headers, payload, remoteAddress: options.ip ?? nextClientAddress() });
  let body: any = response.body;
  try {
    body = response.body ? JSON.parse(response.body) : null;
  } catch {
    // not JSON: keep the text
  }
  return { status: response.statusCode, body, headers: response.headers, raw: response.body };
}

export const PASSWORD = 'correct horse battery staple';

export interface TestUser {
  token: string;
  email: string;
  password: string;
  user: { id: string; email: string; name: string };
}

export function uniqueEmail(prefix = 'user'): string {
  return `${prefix}-${randomBytes(5).toString('hex')}@example.com`;
}

export async function registerUser(t: TestApp, name = 'Test User'): Promise<TestUser> {
  const email = uniqueEmail();
  const res = await api(t, 'POST', '/api/v1/auth/register', { body: { email, password: PASSWORD, name } });
  if (res.status !== 201) throw new Error(`register failed: ${res.status} ${res.raw}`);
  return { token: res.body.token, email, password: PASSWORD, user: res.body.user };
}

export async function createKey(
  t: TestApp,
  token: string,
  scopes: string[],
  capabilities: string[] = [],
): Promise<{ secret: string; id: string }> {
  const res = await api(t, 'POST', '/api/v1/account/keys', { token, body: { name: 'test key', scopes, capabilities } });
  if (res.status !== 201) throw new Error(`key creation failed: ${res.status} ${res.raw}`);
  return { secret: res.body.secret, id: res.body.key.id };
}

/** Asserts the spec's error envelope and returns it. */
export function expectEnvelope(res: ApiResponse, status: number, code: string): any {
  const problems: string[] = [];
  if (res.status !== status) problems.push(`status ${res.status}, expected ${status}`);
  const b = res.body ?? {};
  if (b.error !== code) problems.push(`error ${JSON.stringify(b.error)}, expected ${code}`);
  for (const field of ['error', 'message', 'request_id', 'documentation_url', 'retryable', 'retry_after_seconds', 'details']) {
    if (!(field in b)) problems.push(`missing ${field}`);
  }
  if (b.request_id !== res.headers['x-request-id']) problems.push('request_id differs from X-Request-Id');
  if (typeof b.documentation_url === 'string' && !b.documentation_url.endsWith(`/docs/errors#${code}`)) {
    problems.push(`documentation_url ${b.documentation_url}`);
  }
  if (!Array.isArray(b.details)) problems.push('details is not an array');
  if (problems.length) throw new Error(`${problems.join('; ')}\nbody: ${res.raw}`);
  return b;
}
