import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import fc from 'fast-check';
import { ApiError } from '../../src/http/errors.js';
import { signedCursor } from '../../src/http/cursor.js';
import { buildValidator } from '../../src/http/validation.js';
import { Snapshot } from '../../src/features/ingest/snapshot-schema.js';
import { cursorCodec } from '../../src/features/servers/cursor.js';
import { api, describeEachStore } from '../helpers/app.js';
import { push, reporter, type Reporter } from '../helpers/ingest.js';
import { pick, typeOf, type Schema } from './sweep.js';

/**
 * Property-based tests (fast-check) of the two decoders that take any text
 * from outside: the compiled Snapshot validator of POST /ingest, and the
 * signed cursor. Seeds are random per run; a failure prints its seed and
 * counterexample, and `fc.assert(…, { seed, path })` replays it.
 */

/** The validator exactly as the app compiles the ingest route's body schema (src/http/validation.ts, app.ts). */
const validateSnapshot = buildValidator()({ schema: Snapshot, httpPart: 'body', method: 'POST', url: '/api/v1/ingest' } as never) as (data: unknown) => boolean;

const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'];
const protoKey = fc.constantFrom(...PROTO_KEYS);
const anyKey = fc.oneof(fc.string({ maxLength: 12 }), protoKey);
const anyValue = fc.jsonValue({ maxDepth: 2 });

/**
 * Values shaped like `schema`. `hostile`: wrong types, strings past their
 * maxLength, missing required blocks and prototype keys mixed in at every
 * level; otherwise the values fit the schema, with unknown and prototype
 * keys only at the top, so the sample holds snapshots the validator accepts.
 */
function shaped(schema: Schema, hostile: boolean, depth = 0): fc.Arbitrary<unknown> {
  const s = pick(schema);
  const fit = (arbitrary: fc.Arbitrary<unknown>) => (hostile ? fc.oneof({ weight: 8, arbitrary }, { weight: 1, arbitrary: anyValue }) : arbitrary);
  const orNull = (arbitrary: fc.Arbitrary<unknown>) => fc.oneof({ weight: 8, arbitrary }, { weight: 1, arbitrary: fc.constant(null) });
  switch (typeOf(s)) {
    case 'object': {
      const props: Record<string, Schema> = s.properties ?? {};
      const record = fc.record(Object.fromEntries(Object.entries(props).map(([k, v]) => [k, shaped(v, hostile, depth + 1)])), {
        requiredKeys: hostile ? [] : (s.required ?? []), noNullPrototype: true,
      });
      const extra = fc.dictionary(anyKey, anyValue, { maxKeys: depth === 0 ? 3 : hostile ? 1 : 0 });
      // Spread defines own properties, so a generated "__proto__" stays a key of the JSON text.
      return fit(fc.tuple(record, extra).map(([r, e]) => ({ ...r, ...e })));
    }
    case 'array':
      return fit(fc.array(s.items ? shaped(s.items, hostile, depth + 1) : anyValue, { maxLength: 3 }));
    case 'string': {
      const max = s.maxLength ?? 30;
      const text = s.format === 'date-time'
        ? fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString())
        : fc.oneof(fc.string({ maxLength: Math.min(24, max) }), fc.string({ unit: 'binary', maxLength: Math.min(24, max) }),
          ...(hostile ? [fc.string({ minLength: max, maxLength: max + 2 })] : []));
      return fit(s.format === 'date-time' ? text : orNull(text));
    }
    case 'number': case 'integer':
      return fit(orNull(fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }))));
    case 'boolean':
      return fit(orNull(fc.boolean()));
    default:
      return anyValue;
  }
}
const snapshots = fc.oneof(shaped(Snapshot, false), shaped(Snapshot, true));

/** Whether the JSON text holds a key the JSON parser refuses before any validation: `__proto__`, or `constructor` (possibly with `prototype`). */
const parserMayRefuse = (text: string) => text.includes('"__proto__"') || text.includes('"constructor"');

describe('the ingest validator (property)', () => {
  test('never throws on any JSON value or any value with prototype keys, and answers a boolean', () => {
    const hostile = fc.anything({ key: anyKey, maxDepth: 4, withNullPrototype: true, withObjectString: true, withBoxedValues: true });
    fc.assert(fc.property(fc.oneof(fc.jsonValue(), hostile, snapshots), (value) => {
      let input: unknown;
      try {
        input = structuredClone(value);
      } catch {
        input = value;
      }
      assert.equal(typeof validateSnapshot(input), 'boolean');
    }), { numRuns: 1000 });
  });
});

describeEachStore('POST /ingest against the validator (property)', (t) => {
  let r: Reporter;
  before(async () => {
    r = await reporter(t);
  });

  test('what the validator accepts is 200 (or 400 when the parser refuses a prototype key); what it refuses is 400; never 5xx', async () => {
    const seen = { accepted: 0, refused: 0 };
    await fc.assert(fc.asyncProperty(snapshots, async (snapshot) => {
      const text = JSON.stringify(snapshot);
      const valid = validateSnapshot(JSON.parse(text));
      t.clock.advance(60_000);
      const res = await push(t, r.key, text);
      assert.ok(res.status < 500, `${res.status} ${res.raw}`);
      if (valid && res.status === 200) seen.accepted++;
      else if (valid) assert.ok(parserMayRefuse(text) && res.status === 400 && res.body.error === 'invalid_json', `accepted by the validator, answered ${res.status} ${res.raw}`);
      else {
        seen.refused++;
        assert.equal(res.status, 400, res.raw);
        assert.ok(['validation_failed', 'invalid_json'].includes(res.body.error), res.raw);
      }
    }), { numRuns: 150 });
    assert.ok(seen.accepted > 10 && seen.refused > 10, `too one-sided a sample: ${JSON.stringify(seen)}`);
    const health = await api(t, 'GET', `/api/v1/servers/${r.server.id}/health`, { token: r.user.token });
    assert.equal(health.status, 200, health.raw);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });
});

describe('the cursor decoder (property)', () => {
  const SECRET = 'property-test-secret-key-0123456789abcdef';
  const servers = cursorCodec(SECRET);
  const generic = signedCursor(SECRET, 'deliveries-cursor', (v): v is [string, string, number] =>
    v.length === 3 && typeof v[0] === 'string' && typeof v[1] === 'string' && Number.isInteger(v[2]));
  const text = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }));
  const position = fc.record({ created_at: text, id: text }, { noNullPrototype: true });

  /** Decoding either returns or throws the documented client error: 400 validation_failed at `cursor`. */
  function refusedOrDecoded(decode: () => unknown): 'refused' | 'decoded' {
    try {
      decode();
      return 'decoded';
    } catch (err) {
      assert.ok(err instanceof ApiError, `threw ${String(err)}`);
      assert.deepEqual([err.status, err.code, err.details.map((d) => d.field)], [400, 'validation_failed', ['cursor']]);
      return 'refused';
    }
  }

  test('any text: decoded or refused with 400 validation_failed at cursor, nothing else', () => {
    const cursorLike = fc.tuple(fc.base64String(), fc.base64String()).map(([p, m]) => `${p.replace(/\+/g, '-').replace(/\//g, '_')}.${m}`);
    const jsonLike = fc.tuple(fc.jsonValue(), fc.string()).map(([v, m]) => `${Buffer.from(JSON.stringify(v) ?? '').toString('base64url')}.${m}`);
    fc.assert(fc.property(fc.oneof(text, cursorLike, jsonLike), text, (cursor, account) => {
      assert.equal(refusedOrDecoded(() => servers.decode(account, cursor)), 'refused');
      assert.equal(refusedOrDecoded(() => generic.decode(account, cursor)), 'refused');
    }), { numRuns: 3000 });
  });

  test('encode then decode is the identity', () => {
    fc.assert(fc.property(text, position, (account, pos) => {
      assert.deepEqual(servers.decode(account, servers.encode(account, pos)), pos);
    }), { numRuns: 1000 });
    fc.assert(fc.property(text, fc.tuple(text, text, fc.integer()), (account, pos) => {
      assert.deepEqual(generic.decode(account, generic.encode(account, pos)), pos);
    }), { numRuns: 500 });
  });

  test('any change to a cursor, another account or another list: refused', () => {
    const edit = fc.record({ at: fc.nat(), kind: fc.constantFrom('replace', 'insert', 'delete'), char: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) });
    fc.assert(fc.property(text, text, position, edit, (account, other, pos, { at, kind, char }) => {
      const cursor = servers.encode(account, pos);
      const i = at % (cursor.length + 1);
      const changed = kind === 'insert' ? cursor.slice(0, i) + char + cursor.slice(i)
        : kind === 'delete' ? cursor.slice(0, i) + cursor.slice(i + 1) : cursor.slice(0, i) + char + cursor.slice(i + 1);
      if (changed !== cursor) assert.equal(refusedOrDecoded(() => servers.decode(account, changed)), 'refused', `edited: ${changed}`);
      if (other !== account) assert.equal(refusedOrDecoded(() => servers.decode(other, cursor)), 'refused', 'another account');
      assert.equal(refusedOrDecoded(() => generic.decode(account, cursor)), 'refused', 'another list');
    }), { numRuns: 2000 });
  });
});
