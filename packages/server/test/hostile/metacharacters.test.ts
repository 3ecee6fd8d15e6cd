import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { hostSnapshot } from '../helpers/alerts.js';
import { PASSWORD, api, createKey, describeEachStore, registerUser, uniqueEmail, type ApiResponse, type TestUser } from '../helpers/app.js';
import { pastGate, push, reporter } from '../helpers/ingest.js';
import { createServer } from '../helpers/servers.js';
import { assertOnlyRowsOf, rowChanges, storeRows, type RowChange } from '../helpers/store-rows.js';
import { checkAnswer } from './sweep.js';
import { LINE_BREAKS, LONE_SURROGATE, METACHARACTERS, NUL_TEXT, isUnstorable } from './strings.js';

/**
 * SQL and HTML metacharacters, NUL, and line breaks or separators (header
 * injection) in every free-text field of every create and update body. Text the field's rule allows is stored and reads back through
 * the API byte for byte, as a JSON string (JSON escaping is the only
 * escaping an API owes), with the JSON content type and nosniff so no
 * browser renders it; text it refuses is 400 at the field. Either way no
 * row but the resource's own changes.
 */

interface Outcome {
  /** The request's answer. */
  res: ApiResponse;
  /** What the API shows for the field afterwards (read back), when the request succeeded. */
  readBack?: () => Promise<{ value: unknown; res: ApiResponse }>;
  /** The rows this request may touch. */
  owns: (change: RowChange) => boolean;
}

interface Field {
  label: string;
  pointer: string;
  /** What the field's rule makes of `text`: the stored text, or null when it must be refused. */
  expect: (text: string) => string | null;
  send: (text: string) => Promise<Outcome>;
}

/** A test title without raw control or bidi characters, which would garble the runner's output. */
const ascii = (text: string) => JSON.stringify(text).replace(/[^\x20-\x7e]/gu, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
const ofServer = (id: string) => (c: RowChange) => c.row.id === id || c.row.server_id === id;
const plain = (max: number) => (text: string) => (isUnstorable(text) || [...text].length > max ? null : text);

describeEachStore('SQL and HTML metacharacters in every free-text field', (t) => {
  let user: TestUser;
  let serverId: string;
  let channelId: string;
  before(async () => {
    user = await registerUser(t);
    serverId = (await createServer(t, user.token, { name: 'meta-host' })).id;
    channelId = (await api(t, 'POST', '/api/v1/channels', { token: user.token, body: { name: 'meta', channel_type: 'webhook', config: { url: 'http://127.0.0.1:9/x' } } })).body.id;
  });

  const get = (url: string, token = user.token) => api(t, 'GET', url, { token });
  const serverField = (id: string, pick: (s: any) => unknown) => async () => {
    const res = await get(`/api/v1/servers/${id}`);
    return { value: pick(res.body), res };
  };

  const fields = (): Field[] => [
    {
      label: 'POST /servers name', pointer: '/name', expect: plain(100),
      send: async (text) => {
        const res = await api(t, 'POST', '/api/v1/servers', { token: user.token, body: { name: text } });
        const id = res.body?.server?.id;
        return { res, readBack: serverField(id, (s) => s.name), owns: ofServer(id) };
      },
    },
    {
      label: 'POST /servers tags', pointer: '/tags/0', expect: plain(50),
      send: async (text) => {
        const res = await api(t, 'POST', '/api/v1/servers', { token: user.token, body: { name: 'tagged', tags: [text] } });
        const id = res.body?.server?.id;
        return {
          res, owns: ofServer(id),
          readBack: async () => {
            // The tag filter finds exactly this server by the same text: the text is a value in the query, never SQL.
            const list = await get(`/api/v1/servers?tag=${encodeURIComponent(text)}`);
            assert.deepEqual(list.body.servers.map((s: any) => s.id), [id], `tag filter ${JSON.stringify(text)}`);
            return serverField(id, (s) => s.tags[0])();
          },
        };
      },
    },
    {
      label: 'POST /servers hostname', pointer: '/hostname', expect: () => null,
      send: async (text) => ({ res: await api(t, 'POST', '/api/v1/servers', { token: user.token, body: { hostname: text } }), owns: () => false }),
    },
    {
      label: 'PATCH /servers name', pointer: '/name', expect: plain(100),
      send: async (text) => ({
        res: await api(t, 'PATCH', `/api/v1/servers/${serverId}`, { token: user.token, body: { name: text } }),
        readBack: serverField(serverId, (s) => s.name), owns: ofServer(serverId),
      }),
    },
    {
      label: 'PATCH /servers tags', pointer: '/tags/0', expect: plain(50),
      send: async (text) => ({
        res: await api(t, 'PATCH', `/api/v1/servers/${serverId}`, { token: user.token, body: { tags: [text] } }),
        readBack: serverField(serverId, (s) => s.tags[0]), owns: ofServer(serverId),
      }),
    },
    {
      label: 'PATCH /servers profile', pointer: '/profile', expect: () => null,
      send: async (text) => ({ res: await api(t, 'PATCH', `/api/v1/servers/${serverId}`, { token: user.token, body: { profile: text } }), owns: () => false }),
    },
    {
      label: 'POST /channels name', pointer: '/name', expect: plain(100),
      send: async (text) => {
        const res = await api(t, 'POST', '/api/v1/channels', { token: user.token, body: { name: text, channel_type: 'webhook', config: { url: 'http://127.0.0.1:9/x' } } });
        const id = res.body?.id;
        return { res, owns: (c) => c.row.id === id, readBack: async () => { const r = await get(`/api/v1/channels/${id}`); return { value: r.body.name, res: r }; } };
      },
    },
    {
      label: 'PUT /channels name', pointer: '/name', expect: plain(100),
      send: async (text) => ({
        res: await api(t, 'PUT', `/api/v1/channels/${channelId}`, { token: user.token, body: { name: text } }),
        owns: (c) => c.row.id === channelId,
        readBack: async () => { const r = await get(`/api/v1/channels/${channelId}`); return { value: r.body.name, res: r }; },
      }),
    },
    {
      label: 'POST /account/keys name', pointer: '/name', expect: plain(100),
      send: async (text) => {
        const res = await api(t, 'POST', '/api/v1/account/keys', { token: user.token, body: { name: text, scopes: ['read'] } });
        const id = res.body?.key?.id;
        return {
          res, owns: (c) => c.row.id === id,
          readBack: async () => { const r = await get('/api/v1/account/keys'); return { value: r.body.keys.find((k: any) => k.id === id)?.name, res: r }; },
        };
      },
    },
    {
      label: 'POST /auth/register name', pointer: '/name', expect: plain(100),
      send: async (text) => {
        const res = await api(t, 'POST', '/api/v1/auth/register', { body: { email: uniqueEmail('meta'), password: PASSWORD, name: text } });
        const userId = res.body?.user?.id;
        const account = userId ? (await t.store.db.selectFrom('users').select('account_id').where('id', '=', userId).executeTakeFirst())?.account_id : undefined;
        return {
          res, owns: (c) => [c.row.id, c.row.user_id, c.row.account_id].some((v) => v !== undefined && (v === userId || v === account)),
          readBack: async () => { const r = await get('/api/v1/auth/me', res.body.token); return { value: r.body.name, res: r }; },
        };
      },
    },
    {
      label: 'ingest system.hostname (replaces a placeholder name)', pointer: '', expect: plain(100),
      send: async (text) => {
        const r = await reporter(t, {}, user);
        const snapshot = hostSnapshot(t, { uptime: 86_400 }) as any;
        snapshot.system.hostname = text;
        return { res: await push(t, r.key, snapshot), readBack: serverField(r.server.id, (s) => s.name), owns: ofServer(r.server.id) };
      },
    },
    {
      label: 'ingest disks[].mount (an alert subject)', pointer: '', expect: (text) => text.replace(/[\p{Cc}\p{Cs}]/gu, '\uFFFD'),
      send: async (text) => {
        const r = await reporter(t, {}, user);
        const res = await push(t, r.key, hostSnapshot(t, { uptime: 86_400, disks: [{ mount: text, percent_used: 97 }] }));
        return {
          res, owns: ofServer(r.server.id),
          readBack: async () => {
            // The mount also names a history series; PostgreSQL reads those through jsonb, which refuses \u0000.
            const to = new Date(t.clock.now().getTime() + 60_000).toISOString();
            for (const metric of ['cpu', 'disk']) {
              const history = await get(`/api/v1/servers/${r.server.id}/health/history?metric=${metric}&to=${to}`);
              assert.equal(history.status, 200, `history ${metric}: ${history.raw}`);
              if (metric === 'disk') assert.ok(history.body.series.some((s: any) => s.name === `disk:${text.replace(/[\p{Cc}\p{Cs}]/gu, '\uFFFD')}` && s.points.length === 1), history.raw);
            }
            const list = await get(`/api/v1/servers/${r.server.id}/alerts`);
            return { value: list.body.alerts.find((a: any) => a.alert_type === 'disk_space_high')?.subject, res: list };
          },
        };
      },
    },
  ];

  // Line breaks and separators: header injection into names, tags and profiles (their notifications: notifications.test.ts).
  for (const text of [...METACHARACTERS, NUL_TEXT, LONE_SURROGATE, ...Object.values(LINE_BREAKS)]) {
    test(ascii(text), async () => {
      for (const field of fields()) {
        pastGate(t);
        const before = await storeRows(t.store);
        const { res, readBack, owns } = await field.send(text);
        const what = `${field.label} = ${JSON.stringify(text)}`;
        const stored = field.expect(text);
        assert.ok(Object.keys(res.headers).every((name) => !/injected/i.test(name) && !/injected/i.test(String(res.headers[name]))), `${what}: a header of the answer carries the text`);
        assertOnlyRowsOf(rowChanges(before, await storeRows(t.store)), owns, what);
        if (stored === null && field.pointer) {
          checkAnswer(res, { status: 400, code: 'validation_failed', field: field.pointer }, what);
          continue;
        }
        assert.ok(res.status >= 200 && res.status < 300, `${what} → ${res.status} ${res.raw}`);
        const shown = await readBack!();
        // A name the agent reports with a control character or lone surrogate is ignored: the placeholder stays.
        if (stored === null) assert.match(String(shown.value), /^pending-/, what);
        else assert.equal(shown.value, stored, `${what} read back as ${JSON.stringify(shown.value)}`);
        if (stored !== null) assert.ok(shown.res.raw.includes(JSON.stringify(stored)), `${what}: not in the answer as a JSON string`);
        assert.match(String(shown.res.headers['content-type']), /^application\/json/, what);
        assert.equal(shown.res.headers['x-content-type-options'], 'nosniff', what);
      }
    });
  }

  test("e-mail addresses: an apostrophe is an e-mail character and reads back; markup and SQL are 400 at /email", async () => {
    const email = uniqueEmail("o'brien+ops");
    const ok = await api(t, 'POST', '/api/v1/auth/register', { body: { email, password: PASSWORD } });
    assert.equal(ok.status, 201, ok.raw);
    assert.equal((await get('/api/v1/auth/me', ok.body.token)).body.email, email);
    for (const bad of ['"<script>"@example.com', "x'; DROP TABLE users; --@example.com", '<b>@example.com', 'a@b.com\r\nBcc: evil@example.com']) {
      const before = await storeRows(t.store);
      checkAnswer(await api(t, 'POST', '/api/v1/auth/register', { body: { email: bad, password: PASSWORD } }), { status: 400, code: 'validation_failed', field: '/email' }, bad);
      assertOnlyRowsOf(rowChanges(before, await storeRows(t.store)), () => false, bad);
    }
  });

  test('an Idempotency-Key of SQL metacharacters is a key like any other: cached and replayed', async () => {
    const key = "'; DROP TABLE idempotency_keys; --";
    const first = await api(t, 'POST', '/api/v1/servers', { token: user.token, body: { name: 'idem' }, headers: { 'idempotency-key': key } });
    assert.equal(first.status, 201, first.raw);
    const again = await api(t, 'POST', '/api/v1/servers', { token: user.token, body: { name: 'idem' }, headers: { 'idempotency-key': key } });
    assert.deepEqual([again.status, again.headers['idempotency-replayed'], again.body.server.id], [201, 'true', first.body.server.id]);
    const keys = await createKey(t, user.token, ['read']);
    assert.ok(keys.id.startsWith('key_'), 'the store still works');
  });
});
