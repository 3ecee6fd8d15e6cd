import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { ID_PATTERN } from '../../src/http/schemas.js';
import { describeEachStore, type ApiResponse } from '../helpers/app.js';
import {
  baseBody, batch, buildWorld, checkAnswer, credentialFor, leaves, operations, sendRaw, urlFor, validQuery, withValue,
  type Expected, type Leaf, type Operation, type World,
} from './sweep.js';

/**
 * One field at a time: every field of every request body (the schema's
 * fields, and inside open objects such as a channel's config the fields of
 * the valid body) gets a value of the wrong type and a string past its
 * maxLength, the rest of the body staying valid. Each must be 400
 * validation_failed naming that field. Then every path id and query
 * parameter of every operation gets hostile text. The store must not change
 * and the process must stay up after each operation.
 */

const HUGE = '__HUGE_NUMBER__';
/** Strings past a field without maxLength: the service's own rule must refuse them. */
const LONG_WITHOUT_LIMIT = 100_000;

function wrongValues(leaf: Leaf): Array<[string, unknown]> {
  switch (leaf.type) {
    case 'string': return [['a number', 12345], ['an object', { x: 'y' }]];
    case 'integer': return [['a numeral string', '12'], ['a fraction', 1.5], ['1e999 (Infinity)', HUGE]];
    case 'number': return [['a numeral string', '12'], ['1e999 (Infinity)', HUGE]];
    case 'boolean': return [['the string "true"', 'true'], ['the number 1', 1]];
    case 'array': return [['an object', { 0: 'x' }], ['a string', 'x']];
    case 'object': return [['an array', ['x']], ['a string', 'x']];
    default: return [];
  }
}

function longValues(leaf: Leaf): Array<[string, string]> {
  if (leaf.type !== 'string') return [];
  if (leaf.maxLength === null) return [[`${LONG_WITHOUT_LIMIT} characters (no maxLength)`, 'x'.repeat(LONG_WITHOUT_LIMIT)]];
  return [
    [`maxLength + 1 (${leaf.maxLength + 1}) characters`, 'x'.repeat(leaf.maxLength + 1)],
    [`maxLength + 1 emoji (${leaf.maxLength + 1} code points)`, '😀'.repeat(leaf.maxLength + 1)],
  ];
}

/** The answer a hostile path id must get: 404 when it could be an id (it names nothing of this account), 400 at the parameter when it cannot. */
function expectedForId(segment: string, param: string): Expected {
  let id: string;
  try {
    id = decodeURIComponent(segment);
  } catch {
    return { status: 404, code: 'not_found' };
  }
  // A dot segment is resolved away by URL normalisation: the path names another route, or none.
  if (id === '.' || id === '..') return { status: 404, code: 'not_found' };
  return new RegExp(ID_PATTERN).test(id) && id.length <= 64 ? { status: 404, code: 'not_found' } : { status: 400, code: 'validation_failed', field: param };
}

const HOSTILE_IDS = [
  '%00', 'srv_%00x', "srv_'%20OR%20'1'%3D'1", '1%20OR%201%3D1', '..%2F..%2Fversion', '%2e%2e', encodeURIComponent('<script>alert(1)</script>'),
  'x'.repeat(65), '%F0%9F%94%A5', '%ff', 'srv_%0d%0aX-Injected:%201', encodeURIComponent('srv_\u2028x'), '__proto__', 'constructor', 'toString',
  'srv_does_not_exist_0000', '*', '%25',
];

const HOSTILE_QUERY = [
  '%00', 'x'.repeat(5000), "'%20OR%201%3D1--", '-1', '0', '1e999', 'NaN', '%ff', '%5B%5D', '%7B%7D', '%3Cscript%3E', '__proto__',
  '2026-11-22T12:00:00Z%0d%0aX-Injected:%201', '9'.repeat(400),
];

describeEachStore('hostile fields, ids and query strings on every operation', (t) => {
  let w: World;
  let ops: Operation[];
  before(async () => {
    w = await buildWorld(t);
    ops = await operations(t);
  });

  async function sendBody(op: Operation, body: unknown, url = urlFor(op, w)): Promise<ApiResponse> {
    const payload = JSON.stringify(body).replaceAll(`"${HUGE}"`, '1e999');
    return sendRaw(t, op.method, url, { token: credentialFor(op, w), payload, headers: { 'content-type': 'application/json' } });
  }

  test('every body field: a wrong type and an overlong string are 400 at that field', async (ctx) => {
    const withBody = ops.filter((op) => op.body);
    assert.ok(withBody.length >= 12, `${withBody.length} operations take a body`);
    for (const op of withBody) {
      await ctx.test(op.key, async () => {
        const base = baseBody(op, w, t);
        const fields = leaves(op.body!, base);
        assert.ok(fields.length > 0, `${op.key}: no fields found`);
        await batch(t, op, async (tick) => {
          for (const leaf of fields) {
            for (const [label, value] of [...wrongValues(leaf), ...longValues(leaf)]) {
              const res = await sendBody(op, withValue(base, leaf.path, value));
              tick();
              checkAnswer(res, { status: 400, code: 'validation_failed', field: leaf.pointer }, `${op.key} ${leaf.pointer} as ${label}`);
            }
          }
        });
      });
    }
  });

  test('every path id: hostile text is 400 at the parameter, or 404 when it has the shape of an id', async (ctx) => {
    for (const op of ops.filter((o) => o.pathParams.length > 0)) {
      await ctx.test(op.key, async () => {
        const body = op.body ? baseBody(op, w, t) : undefined;
        await batch(t, op, async (tick) => {
          for (const param of op.pathParams) {
            for (const segment of HOSTILE_IDS) {
              const url = urlFor(op, w, { [param]: segment });
              const res = body === undefined
                ? await sendRaw(t, op.method, url, { token: credentialFor(op, w) })
                : await sendBody(op, body, url);
              tick();
              checkAnswer(res, expectedForId(segment, param), `${op.key} with ${param}=${segment.slice(0, 40)}`);
            }
          }
        });
      });
    }
  });

  test('every query parameter: hostile text is refused or harmless; no 5xx, nothing changed', async (ctx) => {
    for (const op of ops.filter((o) => o.query.length > 0)) {
      await ctx.test(op.key, async () => {
        const body = op.body ? baseBody(op, w, t) : undefined;
        await batch(t, op, async (tick) => {
          for (const { name, schema } of op.query) {
            const values = [...HOSTILE_QUERY.map((v) => `${name}=${v}`), `${name}=1&${name}=2`, `${name}[__proto__][x]=1`, `${name}`];
            for (const query of values) {
              // Only this parameter is hostile; the others keep valid values (a DELETE its confirm=true).
              const rest = validQuery(op, name);
              const url = urlFor(op, w, {}, rest ? `${query}&${rest}` : query);
              const res = body === undefined ? await sendRaw(t, op.method, url, { token: credentialFor(op, w) }) : await sendBody(op, body, url);
              tick();
              const what = `${op.key}?${query.slice(0, 60)}`;
              assert.ok(res.status < 500, `${what} → ${res.status} ${res.raw.slice(0, 300)}`);
              if (op.method !== 'GET' || res.status >= 400) {
                checkAnswer(res, { status: res.status, code: res.body?.error }, what);
                assert.ok(res.status >= 400, `${what} → ${res.status}: a hostile query string made a change request succeed`);
              }
              const typed = schema.type === 'integer' || schema.type === 'number' || Array.isArray(schema.enum);
              // `name[…]=` is another parameter's name to the query parser (dropped as unknown), not a value of this one.
              if (typed && query.startsWith(`${name}=`) && res.status === 200) {
                assert.fail(`${what} → 200: a ${schema.type ?? 'enum'} parameter took hostile text`);
              }
            }
          }
        });
      });
    }
  });
});
