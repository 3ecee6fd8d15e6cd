import { randomBytes } from 'node:crypto';
import { PASSWORD, uniqueEmail, type TestApp } from '../helpers/app.js';
import { fixture } from '../helpers/ingest.js';
import type { Operation, World } from './sweep.js';

/**
 * Request bodies for the hostile suites: a valid body per operation, and
 * the fields of a body as the OpenAPI schema declares them (and, inside
 * objects the schema leaves open, as the valid body has them), so a test
 * can spoil one field at a time.
 */

export type Schema = Record<string, any>;

export const WHSEC = `whsec_${randomBytes(32).toString('base64')}`;

/** A body each operation accepts, so a test can spoil exactly one part of it. */
const BASE_BODIES: Record<string, (w: World, t: TestApp) => Record<string, unknown>> = {
  'POST /auth/register': () => ({ email: uniqueEmail('hostile'), password: PASSWORD, name: 'Hostile Tester' }),
  'POST /auth/login': (w) => ({ email: w.user.email, password: PASSWORD }),
  'POST /auth/verify': () => ({ token: 'A'.repeat(43) }),
  'POST /account/keys': () => ({ name: 'ci key', scopes: ['read'], capabilities: [], expires_at: null }),
  'POST /account/verify-password': () => ({ password: PASSWORD }),
  'POST /servers': () => ({ name: 'web-2', hostname: 'web-2.example.com', tags: ['prod', 'eu'], profile: null }),
  'PATCH /servers/{server_id}': () => ({ name: 'renamed', tags: ['staging'], profile: 'marketplace_gpu' }),
  'PUT /servers/{server_id}/config-overrides': () => ({ thresholds: { disk_space_high: { warning: 80, critical: 90 } }, interval_seconds: 300 }),
  'POST /servers/{server_id}/mutes': () => ({ alert_type: 'cpu_high' }),
  'DELETE /servers/{server_id}/mutes': () => ({ alert_type: 'cpu_high' }),
  'POST /channels': () => ({ name: 'ops hook', channel_type: 'webhook', config: { url: 'http://127.0.0.1:9/hook', secret: WHSEC }, enabled: true }),
  'PUT /channels/{channel_id}': () => ({ name: 'renamed hook', config: { url: 'http://127.0.0.1:9/other', secret: 'a-long-secret-1234' }, enabled: false }),
  'POST /ingest': (_w, t) => ({ ...fixture('snapshot-baremetal.json'), timestamp: t.clock.now().toISOString() }),
};

/** A value of the schema's type; an operation added later without a base body still gets one. */
export function exampleOf(schema: Schema): unknown {
  const s = pick(schema);
  if (s.enum) return s.enum[0];
  switch (typeOf(s)) {
    case 'object': return Object.fromEntries((s.required ?? []).map((k: string) => [k, exampleOf(s.properties?.[k] ?? {})]));
    case 'array': return [];
    case 'string': return s.format === 'date-time' ? '2026-11-22T12:00:00.000Z' : 'x'.repeat(Math.max(1, s.minLength ?? 1));
    case 'number': case 'integer': return s.minimum ?? 1;
    case 'boolean': return true;
    default: return null;
  }
}

export function baseBody(op: Operation, w: World, t: TestApp): Record<string, unknown> {
  const make = BASE_BODIES[op.key];
  return (make ? make(w, t) : exampleOf(op.body ?? {})) as Record<string, unknown>;
}

/** The schema that carries the type: a nullable type array or an anyOf with null is read as its non-null part. */
export function pick(schema: Schema): Schema {
  const alternatives: Schema[] | undefined = schema.anyOf ?? schema.oneOf;
  if (!schema.type && alternatives) return alternatives.find((s) => typeOf(s) !== undefined && typeOf(s) !== 'null') ?? schema;
  return schema;
}

export function typeOf(schema: Schema): string | undefined {
  const s = schema.type ? schema : pick(schema);
  return Array.isArray(s.type) ? s.type.find((x: string) => x !== 'null') : s.type;
}

/** One field of a body: where it is, what the schema (or, inside free-form objects, the base value) says it is. */
export interface Leaf {
  path: Array<string | number>;
  pointer: string;
  type: string;
  maxLength: number | null;
  /** False inside objects the schema leaves open (a channel's config): the service's own rules judge them. */
  declared: boolean;
}

function inferred(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  return Array.isArray(value) ? 'array' : typeof value;
}

/** Every field of the schema, plus the fields of the base value inside open objects; the root itself excluded. */
export function leaves(schema: Schema, value: unknown, path: Array<string | number> = [], declared = true): Leaf[] {
  const s = pick(schema);
  // An untyped schema where one is declared (Type.Unknown) takes anything; inside an open object the base value tells.
  const type = typeOf(s) ?? (declared ? undefined : inferred(value));
  if (!type) return [];
  const out: Leaf[] = path.length > 0
    ? [{ path, pointer: `/${path.join('/')}`, type, maxLength: s.maxLength ?? null, declared }]
    : [];
  const obj = value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
  if (type === 'object') {
    const props: Record<string, Schema> = s.properties ?? {};
    for (const [name, sub] of Object.entries(props)) out.push(...leaves(sub, obj[name], [...path, name], declared));
    const open: Schema | null = s.patternProperties ? Object.values<Schema>(s.patternProperties)[0]!
      : typeof s.additionalProperties === 'object' ? s.additionalProperties : null;
    for (const name of Object.keys(obj)) {
      if (!(name in props)) out.push(...leaves(open ?? {}, obj[name], [...path, name], declared && open !== null));
    }
  } else if (type === 'array' && s.items) {
    out.push(...leaves(s.items, Array.isArray(value) ? value[0] : undefined, [...path, 0], declared));
  }
  return out;
}

/** A deep copy of `body` with the value at `path` replaced, creating missing objects and arrays on the way. */
export function withValue(body: unknown, path: Array<string | number>, value: unknown): any {
  const copy = structuredClone(body) as any;
  let node = copy;
  path.forEach((step, i) => {
    if (i === path.length - 1) {
      node[step] = value;
      return;
    }
    const next = path[i + 1];
    if (node[step] === null || typeof node[step] !== 'object') node[step] = typeof next === 'number' ? [] : {};
    node = node[step];
  });
  return copy;
}
