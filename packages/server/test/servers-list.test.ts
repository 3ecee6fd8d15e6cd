import assert from 'node:assert/strict';
import { test } from 'node:test';
import { api, createKey, describeEachStore, expectEnvelope, registerUser, type TestApp } from './helpers/app.js';
import { createServer, trashServer } from './helpers/servers.js';

const LIST_ITEM_FIELDS = [
  'active_alerts', 'collector_version', 'created_at', 'disk_health_rollup', 'dmi_product', 'dmi_vendor', 'hostname', 'id',
  'ip', 'ipmi_sensors_count', 'last_seen_at', 'name', 'os_type', 'os_version', 'profile', 'status', 'suspended_at',
  'suspended_reason', 'tags',
];

/** Follows next_cursor to the end and returns every id seen, in order. */
async function walk(t: TestApp, token: string, query: string, between?: () => Promise<void>): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 100; pages++) {
    const url: string = `/api/v1/servers?${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const res = await api(t, 'GET', url, { token });
    assert.equal(res.status, 200, res.raw);
    ids.push(...res.body.servers.map((s: { id: string }) => s.id));
    cursor = res.body.next_cursor;
    if (cursor === null) return ids;
    await between?.();
  }
  throw new Error('pagination did not end');
}

describeEachStore('GET /servers', (t) => {
  test('lists the account\'s live servers oldest first with the list item fields, next_cursor null on the last page', async () => {
    const u = await registerUser(t);
    const other = await registerUser(t);
    await createServer(t, other.token, { name: 'not mine' });
    const first = await createServer(t, u.token, { name: 'first', tags: ['x'] });
    t.clock.advance(1000);
    const second = await createServer(t, u.token, { name: 'second' });
    const res = await api(t, 'GET', '/api/v1/servers', { token: u.token });
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ['next_cursor', 'servers']);
    assert.deepEqual(res.body.servers.map((s: { id: string }) => s.id), [first.id, second.id]);
    assert.deepEqual(Object.keys(res.body.servers[0]).sort(), LIST_ITEM_FIELDS);
    assert.deepEqual(res.body.servers[0].tags, ['x']);
    assert.equal(res.body.next_cursor, null);
  });

  test('an account without servers gets an empty page', async () => {
    const u = await registerUser(t);
    assert.deepEqual((await api(t, 'GET', '/api/v1/servers', { token: u.token })).body, { servers: [], next_cursor: null });
  });

  test('trashed servers are not listed', async () => {
    const u = await registerUser(t);
    const kept = await createServer(t, u.token, { name: 'kept' });
    const gone = await createServer(t, u.token, { name: 'gone' });
    await trashServer(t, u.token, gone.id);
    const ids = await walk(t, u.token, 'limit=10');
    assert.deepEqual(ids, [kept.id]);
  });

  test('pages with limit and cursor cover every server exactly once, also when created in the same millisecond', async () => {
    const u = await registerUser(t);
    const created: string[] = [];
    for (let i = 0; i < 7; i++) {
      created.push((await createServer(t, u.token, { name: `s${i}` })).id);
      if (i % 3 === 0) t.clock.advance(1);
    }
    const page = await api(t, 'GET', '/api/v1/servers?limit=3', { token: u.token });
    assert.equal(page.body.servers.length, 3);
    assert.equal(typeof page.body.next_cursor, 'string');
    const all = await walk(t, u.token, 'limit=3');
    assert.equal(all.length, 7);
    assert.deepEqual([...all].sort(), [...created].sort());
    assert.deepEqual(await walk(t, u.token, 'limit=1'), all, 'every page size gives the same order');
    assert.deepEqual(await walk(t, u.token, 'limit=7'), all);
    const exact = await api(t, 'GET', '/api/v1/servers?limit=7', { token: u.token });
    assert.equal(exact.body.next_cursor, null, 'a page that ends exactly at the last server is the last page');
  });

  test('stays stable when servers are created between page fetches', async () => {
    const u = await registerUser(t);
    const existing: string[] = [];
    for (let i = 0; i < 6; i++) existing.push((await createServer(t, u.token, { name: `old${i}` })).id);
    // Some new servers share the millisecond of the page's last server, some come later.
    let n = 0;
    const seen = await walk(t, u.token, 'limit=2', async () => {
      if (n >= 6) return;
      await createServer(t, u.token, { name: `new${n++}` });
      t.clock.advance(10);
      await createServer(t, u.token, { name: `new${n++}` });
    });
    assert.equal(new Set(seen).size, seen.length, 'no server appears twice');
    for (const id of existing) assert.ok(seen.includes(id), `pre-existing ${id} was skipped`);
  });

  test('tag filters are ANDed', async () => {
    const u = await registerUser(t);
    const both = await createServer(t, u.token, { name: 'both', tags: ['prod', 'eu', 'db'] });
    t.clock.advance(1);
    const prodOnly = await createServer(t, u.token, { name: 'prod', tags: ['prod'] });
    await createServer(t, u.token, { name: 'eu', tags: ['eu'] });
    await createServer(t, u.token, { name: 'none' });
    const other = await registerUser(t);
    await createServer(t, other.token, { name: 'theirs', tags: ['prod', 'eu'] });

    const ids = async (query: string) =>
      (await api(t, 'GET', `/api/v1/servers?${query}`, { token: u.token })).body.servers.map((s: { id: string }) => s.id);
    assert.deepEqual(await ids('tag=prod'), [both.id, prodOnly.id]);
    assert.deepEqual(await ids('tag=prod&tag=eu'), [both.id]);
    assert.deepEqual(await ids('tag=prod&tag=eu&tag=prod'), [both.id], 'a repeated tag is one condition');
    assert.deepEqual(await ids('tag=prod&tag=missing'), []);
    assert.deepEqual(await ids('tag=PROD'), [], 'tags compare exactly');
    assert.deepEqual(await walk(t, u.token, 'tag=prod&limit=1'), [both.id, prodOnly.id]);

    await api(t, 'PATCH', `/api/v1/servers/${prodOnly.id}`, { token: u.token, body: { tags: ['eu', 'prod'] } });
    assert.deepEqual(await ids('tag=prod&tag=eu'), [both.id, prodOnly.id], 'the filter follows tag updates');
  });

  test('limit must be an integer from 1 to 100; default 100', async () => {
    const u = await registerUser(t);
    for (let i = 0; i < 101; i++) {
      // Registration is limited to 100 per hour per account; the 101st waits for its token.
      if (i === 100) t.clock.advance(36_000);
      await createServer(t, u.token, { name: `bulk${i}` });
    }
    const dflt = await api(t, 'GET', '/api/v1/servers', { token: u.token });
    assert.equal(dflt.body.servers.length, 100);
    assert.equal(typeof dflt.body.next_cursor, 'string');
    const max = await api(t, 'GET', '/api/v1/servers?limit=100', { token: u.token });
    assert.equal(max.body.servers.length, 100);
    const rest = await api(t, 'GET', `/api/v1/servers?limit=100&cursor=${encodeURIComponent(max.body.next_cursor)}`, { token: u.token });
    assert.equal(rest.body.servers.length, 1);
    assert.equal(rest.body.next_cursor, null);
    for (const limit of ['0', '101', '-1', '2.5', 'ten', '']) {
      const res = await api(t, 'GET', `/api/v1/servers?limit=${limit}`, { token: u.token });
      assert.equal(expectEnvelope(res, 400, 'validation_failed').details[0].field, 'limit', `limit=${limit}`);
    }
  });

  test('forged, corrupted and other accounts\' cursors are 400 with details on cursor', async () => {
    const u = await registerUser(t);
    for (let i = 0; i < 3; i++) await createServer(t, u.token, { name: `c${i}` });
    const cursor: string = (await api(t, 'GET', '/api/v1/servers?limit=1', { token: u.token })).body.next_cursor;
    const [payload, mac] = cursor.split('.');
    const forgedPayload = Buffer.from(JSON.stringify(['1970-01-01T00:00:00.000Z', ''])).toString('base64url');
    const flipped = `${mac![0] === 'A' ? 'B' : 'A'}${mac!.slice(1)}`;
    const other = await registerUser(t);
    for (const [bad, token] of [
      ['garbage', u.token], [payload!, u.token], [`${forgedPayload}.${mac}`, u.token], [`${payload}.${flipped}`, u.token],
      [`${cursor}.x`, u.token], [`.${mac}`, u.token], [cursor, other.token],
    ] as const) {
      const res = await api(t, 'GET', `/api/v1/servers?cursor=${encodeURIComponent(bad)}`, { token });
      const envelope = expectEnvelope(res, 400, 'validation_failed');
      assert.equal(envelope.details[0].field, 'cursor', bad);
      assert.equal(typeof envelope.details[0].issue, 'string');
    }
  });

  test('needs a credential; a read-only key may list', async () => {
    expectEnvelope(await api(t, 'GET', '/api/v1/servers'), 401, 'unauthorized');
    const u = await registerUser(t);
    const reader = await createKey(t, u.token, ['read']);
    assert.equal((await api(t, 'GET', '/api/v1/servers', { token: reader.secret })).status, 200);
  });
});
