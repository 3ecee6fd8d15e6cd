import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { before, test } from 'node:test';
import { signedCursor } from '../../src/http/cursor.js';
import { api, describeEachStore, type ApiResponse } from '../helpers/app.js';
import { createServer } from '../helpers/servers.js';
import { assertStoreUnchanged, storeRows } from '../helpers/store-rows.js';
import {
  baseBody, batch, buildWorld, checkAnswer, credentialFor, idFor, operations, sendRaw, urlFor, type Operation, type World,
} from './sweep.js';

/**
 * Account A uses ids and cursors of account B, forged cursors and ids that
 * exist nowhere. Every id of another account is 404 not_found (contract:
 * never 403, so ids cannot be probed) with a valid body, so the id is the
 * only thing wrong; every cursor not minted by that endpoint for this
 * account is 400 validation_failed at `cursor`. Nothing of B appears in any
 * answer to A and nothing changes.
 */

const CURSOR: { status: number; code: string; field: string } = { status: 400, code: 'validation_failed', field: 'cursor' };
const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Every one-character change of `cursor` (each position to another base64url character) and every bit-flip of its payload's bytes. */
function tamperings(cursor: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i < cursor.length; i++) {
    const c = cursor[i]!;
    const other = c === 'A' ? 'B' : 'A';
    out.push([`character ${i} changed`, cursor.slice(0, i) + other + cursor.slice(i + 1)]);
  }
  const [payload, mac] = cursor.split('.') as [string, string];
  const bytes = Buffer.from(payload, 'base64url');
  for (let i = 0; i < bytes.length; i++) {
    const flipped = Buffer.from(bytes);
    flipped[i] = flipped[i]! ^ 0x01;
    out.push([`payload byte ${i} flipped`, `${flipped.toString('base64url')}.${mac}`]);
  }
  out.push(
    ['truncated', cursor.slice(0, -1)], ['one character more', `${cursor}A`], ['a third part', `${cursor}.AAAA`],
    ['payload and MAC swapped', `${mac}.${payload}`], ['MAC only', `.${mac}`], ['payload only', `${payload}.`],
    ['re-padded base64', `${payload}==.${mac}`], ['upper-cased', cursor.toUpperCase()],
  );
  return out.filter(([, forged]) => forged !== cursor);
}

function forgedCursors(): Array<[string, string]> {
  const random = Array.from({ length: 8 }, (_, i) => [`random base64url ${i}`, `${randomBytes(8 + i * 7).toString('base64url')}.${randomBytes(32).toString('base64url')}`] as [string, string]);
  const json = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return [
    ...random,
    ['empty', ''], ['a dot', '.'], ['two dots', '..'], ['plain text', 'page2'], ['%00', '\u0000'],
    ['unsigned keyset', json(['2026-11-22T12:00:00.000Z', 'srv_x'])],
    ['keyset with a made-up MAC', `${json(['1970-01-01T00:00:00.000Z', "' OR 1=1 --"])}.${'A'.repeat(43)}`],
    ['signed with another SECRET_KEY', signedCursor('another-secret-key-of-another-kiln-000000', 'cursor', (v): v is [string, string] => v.length === 2).encode('acc_x', ['1970-01-01T00:00:00.000Z', 'srv_x'])],
    ['1000 characters', 'A'.repeat(1000)],
  ];
}

describeEachStore('ids and cursors of another account, and forged ones', (t) => {
  let a: World;
  let b: World;
  let ops: Operation[];
  const cursors = { a: '', b: '', deliveriesA: '', deliveriesB: '' };
  const secretsOfB: string[] = [];

  before(async () => {
    a = await buildWorld(t, 'alpha-host');
    b = await buildWorld(t, 'bravo-host');
    ops = await operations(t);
    for (const w of [a, b]) {
      for (const name of ['extra-1', 'extra-2']) await createServer(t, w.user.token, { name: `${w === a ? 'alpha' : 'bravo'}-${name}` });
      // Two test sends to a closed port: two failed deliveries, so the deliveries list has a second page.
      for (let i = 0; i < 2; i++) await api(t, 'POST', `/api/v1/channels/${w.ids.channel}/test`, { token: w.user.token });
    }
    const page = async (w: World, url: string) => (await api(t, 'GET', url, { token: w.user.token })).body.next_cursor as string;
    cursors.a = await page(a, '/api/v1/servers?limit=1');
    cursors.b = await page(b, '/api/v1/servers?limit=1');
    cursors.deliveriesA = await page(a, `/api/v1/channels/${a.ids.channel}/deliveries?limit=1`);
    cursors.deliveriesB = await page(b, `/api/v1/channels/${b.ids.channel}/deliveries?limit=1`);
    assert.ok(Object.values(cursors).every((c) => typeof c === 'string' && c.length > 0), JSON.stringify(cursors));
    const servers = await t.store.db.selectFrom('servers').select(['id', 'name']).where('name', 'like', 'bravo%').execute();
    secretsOfB.push(...Object.values(b.ids), ...servers.flatMap((s) => [s.id, s.name]), b.user.email, b.collectorKey);
  });

  function assertNothingOfB(res: ApiResponse, what: string): void {
    for (const secret of secretsOfB) assert.ok(!res.raw.includes(secret), `${what}: the answer names ${secret} of the other account`);
  }

  test('every operation with an id of the other account: 404 not_found, nothing of it in the answer, nothing changed', async (ctx) => {
    for (const op of ops.filter((o) => o.pathParams.length > 0)) {
      await ctx.test(op.key, async () => {
        await batch(t, op, async (tick) => {
          const foreign = Object.fromEntries(op.pathParams.map((p) => [p, idFor(op, p, b)]));
          const unknown = Object.fromEntries(op.pathParams.map((p) => [p, `${idFor(op, p, a).split('_')[0]}_${randomBytes(15).toString('base64url')}`]));
          for (const [label, ids] of [['the other account\'s id', foreign], ['an id that exists nowhere', unknown]] as const) {
            const body = op.body ? JSON.stringify(baseBody(op, a, t)) : undefined;
            const res = await sendRaw(t, op.method, urlFor(op, a, ids), {
              token: credentialFor(op, a), payload: body, headers: body ? { 'content-type': 'application/json' } : {},
            });
            tick();
            checkAnswer(res, { status: 404, code: 'not_found' }, `${op.key} with ${label}`);
            assertNothingOfB(res, `${op.key} with ${label}`);
          }
        });
      });
    }
  });

  test('every list the other account could appear in shows nothing of it', async () => {
    for (const op of ops.filter((o) => o.method === 'GET' && o.pathParams.length === 0 && o.auth === 'account')) {
      const res = await api(t, 'GET', urlFor(op, a), { token: a.user.token });
      assert.ok(res.status < 500, `${op.key} → ${res.status}`);
      assertNothingOfB(res, op.key);
    }
  });

  test('GET /servers: forged, tampered, foreign and other-endpoint cursors are 400 at cursor; the real one pages', async () => {
    const before = await storeRows(t.store);
    const cases: Array<[string, string]> = [
      ...forgedCursors(), ...tamperings(cursors.a),
      ['the other account\'s cursor', cursors.b], ['a deliveries cursor', cursors.deliveriesA],
    ];
    for (const [label, cursor] of cases) {
      const res = await api(t, 'GET', `/api/v1/servers?limit=1&cursor=${encodeURIComponent(cursor)}`, { token: a.user.token });
      checkAnswer(res, CURSOR, `servers cursor: ${label}`);
      assertNothingOfB(res, label);
    }
    const next = await api(t, 'GET', `/api/v1/servers?limit=1&cursor=${encodeURIComponent(cursors.a)}`, { token: a.user.token });
    assert.equal(next.status, 200, next.raw);
    assert.match(next.body.servers[0].name, /^alpha/);
    assertNothingOfB(next, 'the real cursor');
    await assertStoreUnchanged(t.store, before, 'cursors');
  });

  test('GET /channels/:id/deliveries: the same, and a servers cursor is not a deliveries cursor', async () => {
    const cases: Array<[string, string]> = [
      ...forgedCursors(), ...tamperings(cursors.deliveriesA),
      ['the other account\'s deliveries cursor', cursors.deliveriesB], ['a servers cursor', cursors.a],
    ];
    for (const [label, cursor] of cases) {
      const res = await api(t, 'GET', `/api/v1/channels/${a.ids.channel}/deliveries?limit=1&cursor=${encodeURIComponent(cursor)}`, { token: a.user.token });
      checkAnswer(res, CURSOR, `deliveries cursor: ${label}`);
      assertNothingOfB(res, label);
    }
    const next = await api(t, 'GET', `/api/v1/channels/${a.ids.channel}/deliveries?limit=1&cursor=${encodeURIComponent(cursors.deliveriesA)}`, { token: a.user.token });
    assert.deepEqual([next.status, next.body.deliveries.length], [200, 1], next.raw);
  });

  test('the other account\'s collector key only ever reaches its own server', async () => {
    const res = await api(t, 'GET', '/api/v1/ingest', { token: b.collectorKey });
    assert.deepEqual([res.status, res.body.server.id], [200, b.ids.server]);
    checkAnswer(await api(t, 'GET', `/api/v1/servers/${b.ids.server}`, { token: b.collectorKey }), { status: 401, code: 'invalid_token' }, 'collector key on the API');
  });
});
