import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { before, test } from 'node:test';
import { BODY_LIMIT_BYTES } from '../../src/app.js';
import { MAX_JSON_DEPTH } from '../../src/http/json-body.js';
import { INGEST_BODY_LIMIT_BYTES } from '../../src/features/ingest/routes.js';
import { describeEachStore } from '../helpers/app.js';
import {
  baseBody, batch, buildWorld, checkAnswer, credentialFor, operations, sendRaw, urlFor, type Expected, type Operation, type World,
} from './sweep.js';

/**
 * Every operation of the OpenAPI document that can carry a body, with a
 * valid credential and real ids of its own account (so only the body is
 * wrong), gets each hostile body below. Each must be its 4xx in the
 * envelope; the store must be exactly as before and /healthz must answer.
 * GET operations are left out here: Fastify does not read a GET body (it is
 * ignored, never parsed); their query strings and ids are in fields.test.ts.
 */

const JSON_TYPE = { 'content-type': 'application/json' };
const INVALID_JSON: Expected = { status: 400, code: 'invalid_json' };
const UNSUPPORTED: Expected = { status: 415, code: 'unsupported_media_type' };
const TOO_LARGE: Expected = { status: 413, code: 'payload_too_large' };
/** The largest body limit of any route: one byte more is over every route's limit. */
const LIMIT = Math.max(BODY_LIMIT_BYTES, INGEST_BODY_LIMIT_BYTES);

interface BodyCase {
  name: string;
  payload: string | Buffer;
  headers: Record<string, string>;
  expect: Expected | Expected[];
}

const MALFORMED = ['{', '{"a":', '{"a":1,}', '[1,2', 'nul', "{'a':1}", '{"a":1}}', '{"a":01}', '{"a":"\\x41"}', '{"a":NaN}', '{"a":Infinity}', '{"a":"\t"}', '\u0000', '//{}'];

/** Byte sequences no UTF-8 decoder may accept. */
const BAD_UTF8: Record<string, number[]> = {
  'lone continuation byte': [0x80],
  'C3 28 (bad continuation)': [0xc3, 0x28],
  'FF byte': [0xff],
  'overlong "/" (C0 AF)': [0xc0, 0xaf],
  'UTF-16 surrogate (ED A0 80)': [0xed, 0xa0, 0x80],
  'above U+10FFFF (F4 90 80 80)': [0xf4, 0x90, 0x80, 0x80],
  'truncated sequence (E2 82)': [0xe2, 0x82],
};

/** `text` (a JSON object) with `member` (`"name":value`) added as its first member. */
function withMember(text: string, member: string): string {
  return text === '{}' ? `{${member}}` : `{${member},${text.slice(1)}`;
}

function deep(levels: number, open: string, close: string, inner = ''): string {
  return open.repeat(levels) + inner + close.repeat(levels);
}

function bodyCases(op: Operation, base: Record<string, unknown>): BodyCase[] {
  const text = JSON.stringify(base);
  const json = (name: string, payload: string | Buffer, expect: Expected | Expected[] = INVALID_JSON): BodyCase => ({ name, payload, headers: JSON_TYPE, expect });
  const pad = (size: number) => withMember(text, `"pad":"${'x'.repeat(Math.max(0, size - text.length - 9))}"`);
  const deepArray = deep(10_000, '[', ']');
  const deepObject = deep(10_000, '{"a":', '}', '1');
  const cases: BodyCase[] = [
    ...MALFORMED.map((raw) => json(`malformed JSON ${JSON.stringify(raw)}`, raw)),
    json('empty body with a JSON Content-Type', ''),
    json('the valid body cut in half', text.slice(0, Math.ceil(text.length / 2))),
    json('the valid body as UTF-16LE', Buffer.from(text, 'utf16le')),
    { name: 'Content-Type text/plain', payload: text, headers: { 'content-type': 'text/plain' }, expect: UNSUPPORTED },
    { name: 'Content-Type text/plain; charset=utf-8', payload: text, headers: { 'content-type': 'text/plain; charset=utf-8' }, expect: UNSUPPORTED },
    { name: 'Content-Type form-urlencoded', payload: 'name=x&__proto__[polluted]=1', headers: { 'content-type': 'application/x-www-form-urlencoded' }, expect: UNSUPPORTED },
    {
      name: 'Content-Type multipart/form-data',
      payload: `--kiln\r\nContent-Disposition: form-data; name="body"\r\nContent-Type: application/json\r\n\r\n${text}\r\n--kiln--\r\n`,
      headers: { 'content-type': 'multipart/form-data; boundary=kiln' },
      expect: UNSUPPORTED,
    },
    { name: 'Content-Type application/xml', payload: '<a>1</a>', headers: { 'content-type': 'application/xml' }, expect: UNSUPPORTED },
    { name: 'Content-Type application/octet-stream', payload: text, headers: { 'content-type': 'application/octet-stream' }, expect: UNSUPPORTED },
    { name: 'Content-Type application/vnd.api+json', payload: text, headers: { 'content-type': 'application/vnd.api+json' }, expect: UNSUPPORTED },
    { name: 'no Content-Type', payload: text, headers: {}, expect: UNSUPPORTED },
    json(`body of the limit + 1 byte (${LIMIT + 1})`, pad(LIMIT + 1), TOO_LARGE),
    json('body of 3 × the limit', pad(3 * LIMIT), TOO_LARGE),
    json('10,000 nested arrays', deepArray),
    json('10,000 nested objects', deepObject),
    json(`${MAX_JSON_DEPTH + 1} nested arrays inside the valid body`, withMember(text, `"deep":${deep(MAX_JSON_DEPTH, '[', ']')}`)),
    json('100,000 nested arrays inside the valid body', withMember(text, `"deep":${deep(100_000, '[', ']')}`)),
    json('"__proto__" at the top', withMember(text, '"__proto__":{"polluted":true}')),
    json('"__proto__" nested', withMember(text, '"x":{"y":[{"__proto__":{"polluted":true}}]}')),
    json('"constructor.prototype" at the top', withMember(text, '"constructor":{"prototype":{"polluted":true}}')),
    json('"constructor.prototype" nested', withMember(text, '"x":[{"constructor":{"prototype":{"polluted":true}}}]')),
    json('escaped "\\u005f_proto__" key', withMember(text, '"\\u005f_proto__":{"polluted":true}')),
  ];
  for (const [name, bytes] of Object.entries(BAD_UTF8)) {
    const rest = text === '{}' ? '"}' : `",${text.slice(1)}`;
    cases.push(json(`invalid UTF-8 in a string: ${name}`, Buffer.concat([Buffer.from('{"x":"'), Buffer.from(bytes), Buffer.from(rest)])));
  }
  cases.push(json('invalid UTF-8 outside strings', Buffer.concat([Buffer.from('{'), Buffer.from([0xff, 0xfe]), Buffer.from(text.slice(1))])));
  if (op.key === 'POST /ingest') {
    const gz = (payload: Buffer): BodyCase => ({ name: '', payload, headers: { ...JSON_TYPE, 'content-encoding': 'gzip' }, expect: INVALID_JSON });
    cases.push(
      { ...gz(gzipSync(pad(LIMIT + 1))), name: 'gzip that inflates past the limit', expect: TOO_LARGE },
      { ...gz(gzipSync(Buffer.alloc(64 * LIMIT, 0x20))), name: 'gzip bomb (64 MiB of spaces)', expect: TOO_LARGE },
      { ...gz(gzipSync(text).subarray(0, 40)), name: 'truncated gzip stream' },
      { ...gz(Buffer.from(text)), name: 'Content-Encoding gzip on plain JSON' },
      { ...gz(gzipSync(deepArray)), name: 'gzip of 10,000 nested arrays' },
      { ...gz(gzipSync(withMember(text, '"__proto__":{"polluted":true}'))), name: 'gzip of a "__proto__" body' },
      { name: 'Content-Encoding br', payload: text, headers: { ...JSON_TYPE, 'content-encoding': 'br' }, expect: UNSUPPORTED },
    );
  } else {
    // Only ingest decodes Content-Encoding; elsewhere the compressed bytes are the body, which is not JSON.
    cases.push({ name: 'Content-Encoding gzip where none is taken', payload: gzipSync(text), headers: { ...JSON_TYPE, 'content-encoding': 'gzip' }, expect: [INVALID_JSON, UNSUPPORTED] });
  }
  return cases;
}

describeEachStore('hostile bodies on every operation', (t) => {
  let w: World;
  let ops: Operation[];
  before(async () => {
    w = await buildWorld(t);
    ops = await operations(t);
  });

  test('each gets its 4xx in the envelope, the store is unchanged and the process answers', async (ctx) => {
    const withBody = ops.filter((op) => op.method !== 'GET');
    assert.ok(withBody.length >= 25, `${withBody.length} operations`);
    for (const op of withBody) {
      await ctx.test(op.key, async () => {
        await batch(t, op, async (tick) => {
          for (const c of bodyCases(op, baseBody(op, w, t))) {
            const res = await sendRaw(t, op.method, urlFor(op, w), { token: credentialFor(op, w), payload: c.payload, headers: c.headers });
            tick();
            checkAnswer(res, c.expect, `${op.key}: ${c.name}`);
          }
        });
      });
    }
    assert.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype was polluted');
  });

  test(`nesting: ${MAX_JSON_DEPTH} levels are a body like any other, one more is 400; with an Idempotency-Key too`, async () => {
    // The snapshot object is level 1, so `extra` may hold MAX_JSON_DEPTH - 1 levels.
    const ingest = ops.find((op) => op.key === 'POST /ingest')!;
    const snapshot = (levels: number) => withMember(JSON.stringify(baseBody(ingest, w, t)), `"extra":${deep(levels, '[', ']')}`);
    t.clock.advance(60_000);
    const atLimit = await sendRaw(t, 'POST', '/api/v1/ingest', { token: w.collectorKey, payload: snapshot(MAX_JSON_DEPTH - 1), headers: JSON_TYPE });
    assert.equal(atLimit.status, 200, atLimit.raw);
    t.clock.advance(60_000);
    const over = await sendRaw(t, 'POST', '/api/v1/ingest', { token: w.collectorKey, payload: snapshot(MAX_JSON_DEPTH), headers: JSON_TYPE });
    checkAnswer(over, INVALID_JSON, 'one level too deep');
    // Request hashing for Idempotency-Key walks the body; a deep body once made it overflow the stack (500).
    await batch(t, { key: 'POST /servers with Idempotency-Key', rateLimit: 'server-create' }, async () => {
      for (const levels of [MAX_JSON_DEPTH, 10_000, 200_000]) {
        const res = await sendRaw(t, 'POST', '/api/v1/servers', {
          token: w.user.token, payload: `{"name":"deep","tags":${deep(levels, '[', ']')}}`, headers: { ...JSON_TYPE, 'idempotency-key': `deep-${levels}` },
        });
        checkAnswer(res, INVALID_JSON, `${levels} levels with an Idempotency-Key`);
      }
    });
  });
});
