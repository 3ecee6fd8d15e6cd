import assert from 'node:assert/strict';
import { hostSnapshot, pushOk } from '../helpers/alerts.js';
import {
  PASSWORD, api, createKey, expectEnvelope, nextClientAddress, registerUser, type ApiResponse, type TestApp, type TestUser,
} from '../helpers/app.js';
import { createServer, trashServer } from '../helpers/servers.js';
import { assertStoreUnchanged, storeRows } from '../helpers/store-rows.js';
import { exampleOf, type Schema } from './body-fields.js';

export { WHSEC, baseBody, exampleOf, leaves, pick, typeOf, withValue, type Leaf, type Schema } from './body-fields.js';

/**
 * What the hostile suites share: every operation of the OpenAPI document
 * the app serves (so a new endpoint is swept without touching the tests), an
 * account holding one resource of every kind the paths name, URLs and
 * credentials that leave only the part under test wrong (valid bodies:
 * body-fields.ts), and a batch runner that checks the store and the process
 * after each batch.
 */

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface Operation {
  method: Method;
  /** The OpenAPI path, e.g. `/servers/{server_id}`. */
  template: string;
  /** `METHOD template`, the key of BASE_BODIES. */
  key: string;
  auth: 'public' | 'account' | 'collector';
  capability: string | null;
  /** The per-account sub-limit (x-kiln-access rate_limit), e.g. 10 rotations an hour. */
  rateLimit: string | null;
  body: Schema | null;
  pathParams: string[];
  query: Array<{ name: string; schema: Schema; required: boolean }>;
}

export async function operations(t: TestApp): Promise<Operation[]> {
  const doc = (await api(t, 'GET', '/api/v1/openapi.json')).body;
  const ops: Operation[] = [];
  for (const [template, item] of Object.entries<Record<string, any>>(doc.paths)) {
    for (const [verb, op] of Object.entries<any>(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(verb)) continue;
      const method = verb.toUpperCase() as Method;
      const access = op['x-kiln-access'] ?? {};
      const params: any[] = op.parameters ?? [];
      ops.push({
        method, template, key: `${method} ${template}`,
        auth: access.auth ?? 'account',
        capability: access.capability ?? null,
        rateLimit: access.rate_limit ?? null,
        body: op.requestBody?.content?.['application/json']?.schema ?? null,
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        query: params.filter((p) => p.in === 'query').map((p) => ({ name: p.name, schema: p.schema ?? {}, required: p.required === true })),
      });
    }
  }
  assert.ok(ops.length >= 40, `only ${ops.length} operations in the OpenAPI document`);
  return ops;
}

/** An account with one live resource of every kind a path names, and every credential kind. */
export interface World {
  user: TestUser;
  collectorKey: string;
  /** A write key holding servers:purge that has just re-authenticated. */
  purgeKey: string;
  ids: { server: string; trashed: string; alert: string; channel: string; key: string };
}

export async function buildWorld(t: TestApp, name = 'hostile-web'): Promise<World> {
  const user = await registerUser(t);
  const server = await createServer(t, user.token, { name, tags: ['prod'] });
  await pushOk(t, { user, server, key: server.api_key }, hostSnapshot(t, { uptime: 86_400, firewall: false }));
  const alerts = await api(t, 'GET', `/api/v1/servers/${server.id}/alerts`, { token: user.token });
  const trashed = await createServer(t, user.token, { name: `${name}-old` });
  await trashServer(t, user.token, trashed.id);
  const channel = await api(t, 'POST', '/api/v1/channels', {
    token: user.token, body: { name: `${name} hook`, channel_type: 'webhook', config: { url: 'http://127.0.0.1:9/hook' } },
  });
  assert.equal(channel.status, 201, channel.raw);
  const key = await createKey(t, user.token, ['read']);
  const purge = await createKey(t, user.token, ['write'], ['servers:purge']);
  const verified = await api(t, 'POST', '/api/v1/account/verify-password', { token: purge.secret, body: { password: PASSWORD } });
  assert.equal(verified.status, 200, verified.raw);
  return {
    user, collectorKey: server.api_key, purgeKey: purge.secret,
    ids: { server: server.id, trashed: trashed.id, alert: alerts.body.alerts[0].id, channel: channel.body.id, key: key.id },
  };
}

/** The id a path parameter gets: the world's resource of that kind (the trashed server where only one of those fits). */
export function idFor(op: Operation, param: string, w: World): string {
  switch (param) {
    case 'server_id': return op.template.startsWith('/trashed-servers/') || op.template.endsWith('/restore') ? w.ids.trashed : w.ids.server;
    case 'alert_id': return w.ids.alert;
    case 'channel_id': return w.ids.channel;
    case 'key_id': return w.ids.key;
    default: return `unknown_${param}_000000000000`;
  }
}

/**
 * The operation's URL against the world, with `confirm=true` where it takes
 * one and a valid value for every required query parameter: only the part
 * under test may be wrong. `query` replaces the query string.
 */
export function urlFor(op: Operation, w: World, ids: Partial<Record<string, string>> = {}, query?: string): string {
  const path = op.template.replace(/\{(\w+)\}/g, (_m, p: string) => ids[p] ?? idFor(op, p, w));
  const search = query ?? validQuery(op);
  return `/api/v1${path}${search ? `?${search}` : ''}`;
}

/** Valid values of query parameters the schema types only as strings (the service checks them). */
const QUERY_EXAMPLES: Record<string, string> = { confirm: 'true', metric: 'cpu' };

/** `confirm=true` and every required parameter with a valid value, leaving out `without`. */
export function validQuery(op: Operation, without?: string): string {
  return op.query.filter((q) => q.name !== without && (q.name === 'confirm' || q.required))
    .map((q) => `${q.name}=${encodeURIComponent(QUERY_EXAMPLES[q.name] ?? String(exampleOf(q.schema)))}`).join('&');
}

export function credentialFor(op: Operation, w: World): string | undefined {
  if (op.auth === 'public') return undefined;
  if (op.auth === 'collector') return w.collectorKey;
  return op.capability ? w.purgeKey : w.user.token;
}

export interface Expected {
  status: number;
  code: string;
  /** When set, `details` must name this field. */
  field?: string;
}

/** Checks an answer: the expected 4xx in the envelope (or, when `expected` is a list, one of them), details naming the field when given. */
export function checkAnswer(res: ApiResponse, expected: Expected | Expected[], what: string): void {
  assert.ok(res.status < 500, `${what} → ${res.status} ${res.raw.slice(0, 300)}`);
  const options = Array.isArray(expected) ? expected : [expected];
  const match = options.find((e) => e.status === res.status && e.code === res.body?.error);
  if (!match) {
    assert.fail(`${what} → ${res.status} ${res.raw.slice(0, 300)}; expected ${options.map((e) => `${e.status} ${e.code}`).join(' or ')}`);
  }
  try {
    expectEnvelope(res, match.status, match.code);
  } catch (err) {
    throw new Error(`${what}: ${(err as Error).message}`);
  }
  if (match.field !== undefined) {
    const fields = (res.body.details as Array<{ field: string }>).map((d) => d.field);
    assert.ok(fields.includes(match.field), `${what}: details name ${JSON.stringify(fields)}, expected ${match.field}`);
  }
}

const HOUR_MS = 3_600_000;

/**
 * Runs one batch of hostile requests against `op`: the store is read whole
 * before and after and must be equal, and /healthz must answer 200 after.
 * The fake clock moves an hour first (every rate-limit bucket is full
 * again), then, per request (`tick`), a second, or six minutes on an
 * operation with an hourly sub-limit (the smallest, rotation, refills one
 * token in six), so each request is judged on its body, not refused by the
 * limiter that runs before the body is read.
 */
export async function batch(t: TestApp, op: Pick<Operation, 'key' | 'rateLimit'>, run: (tick: () => void) => Promise<void>, what = op.key): Promise<void> {
  t.clock.advance(HOUR_MS);
  const before = await storeRows(t.store);
  await run(() => t.clock.advance(op.rateLimit ? HOUR_MS / 10 : 1000));
  await assertStoreUnchanged(t.store, before, what);
  const health = await api(t, 'GET', '/healthz');
  assert.equal(health.status, 200, `${what}: /healthz → ${health.status}`);
}

/** One request with a body given as text or bytes, exactly as sent; a fresh client address as api() gives. */
export async function sendRaw(
  t: TestApp,
  method: Method,
  url: string,
  options: { token?: string; payload?: string | Buffer; headers?: Record<string, string> } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const response = await t.app.inject({ method, url, headers, payload: options.payload, remoteAddress: nextClientAddress() });
  let body: any = response.body;
  try {
    body = response.body ? JSON.parse(response.body) : null;
  } catch {
    // not JSON: keep the text
  }
  return { status: response.statusCode, body, headers: response.headers, raw: response.body };
}
