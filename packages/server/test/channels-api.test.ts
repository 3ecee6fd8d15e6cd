import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CHANNELS_MAX } from '../src/features/channels/service.js';
import { api, createKey, describeEachStore, expectEnvelope, registerUser, type TestApp } from './helpers/app.js';

const BOT_TOKEN = '123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1';
const ROUTING_KEY = 'R0ut1ngK3yR0ut1ngK3yR0ut1ngK3y12';
const SLACK_URL = 'https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXXXXXXXXXX';
const WEBHOOK_URL = 'https://receiver.example.com/hooks/kiln?token=abc123';

async function create(t: TestApp, token: string, body: Record<string, unknown>) {
  return api(t, 'POST', '/api/v1/channels', { token, body });
}

async function created(t: TestApp, token: string, body: Record<string, unknown>) {
  const res = await create(t, token, body);
  assert.equal(res.status, 201, res.raw);
  return res.body;
}

describeEachStore('channels API', (t) => {
  describe('POST /channels', () => {
    test('creates each type and answers the record with secrets masked', async () => {
      const u = await registerUser(t);
      const cases: Array<[Record<string, unknown>, Record<string, unknown>]> = [
        [{ channel_type: 'email', config: { recipients: ['Ops@Example.com', ' dev@example.com ', 'ops@example.com'] } },
          { recipients: ['Ops@Example.com', 'dev@example.com'] }],
        [{ channel_type: 'telegram', config: { bot_token: BOT_TOKEN, chat_id: -1001234567890 } },
          { bot_token: '1234****saw1', chat_id: '-1001234567890' }],
        [{ channel_type: 'telegram', config: { bot_token: BOT_TOKEN, chat_id: '@kiln_alerts' } },
          { bot_token: '1234****saw1', chat_id: '@kiln_alerts' }],
        [{ channel_type: 'slack', config: { webhook_url: SLACK_URL } }, { webhook_url: 'https://hooks.slack.com/****' }],
        [{ channel_type: 'discord', config: { webhook_url: 'https://discord.com/api/webhooks/123/abcdef' } }, { webhook_url: 'https://discord.com/****' }],
        [{ channel_type: 'pagerduty', config: { routing_key: ROUTING_KEY } }, { routing_key: 'R0ut****3y12' }],
        [{ channel_type: 'webhook', config: { url: WEBHOOK_URL, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' } },
          { url: 'https://receiver.example.com/****', secret: '****' }],
        [{ channel_type: 'webhook', config: { url: 'http://receiver.example.com:8080/in' } }, { url: 'http://receiver.example.com:8080/****', secret: null }],
      ];
      for (const [body, config] of cases) {
        t.clock.advance(1);
        const channel = await created(t, u.token, { name: ` ${body.channel_type} `, ...body });
        assert.match(channel.id, /^chn_[A-Za-z0-9_-]{20}$/);
        assert.deepEqual({ ...channel, id: 'x' }, {
          id: 'x', name: String(body.channel_type), channel_type: body.channel_type, config, enabled: true,
          created_at: t.clock.now().toISOString(), updated_at: t.clock.now().toISOString(), last_delivery_at: null, last_delivery_status: null,
        });
        assert.deepEqual((await api(t, 'GET', `/api/v1/channels/${channel.id}`, { token: u.token })).body, channel);
      }
      const list = await api(t, 'GET', '/api/v1/channels', { token: u.token });
      assert.equal(list.status, 200);
      assert.deepEqual(list.body.channels.map((c: any) => c.channel_type), cases.map(([b]) => b.channel_type));
      assert.ok(!list.raw.includes(BOT_TOKEN) && !list.raw.includes(ROUTING_KEY) && !list.raw.includes('XXXXXXXX') && !list.raw.includes('token=abc123'));
    });

    test('enabled: false creates a disabled channel', async () => {
      const u = await registerUser(t);
      const channel = await created(t, u.token, { name: 'quiet', channel_type: 'pagerduty', enabled: false, config: { routing_key: ROUTING_KEY } });
      assert.equal(channel.enabled, false);
    });

    test('bad type or config: 400 validation_failed pointing at the field, nothing stored', async () => {
      const u = await registerUser(t);
      const bad: Array<[Record<string, unknown>, string]> = [
        [{ channel_type: 'sms', config: {} }, '/channel_type'],
        [{ channel_type: 'email', config: {} }, '/config/recipients'],
        [{ channel_type: 'email', config: { recipients: [] } }, '/config/recipients'],
        [{ channel_type: 'email', config: { recipients: Array.from({ length: 21 }, (_, i) => `u${i}@example.com`) } }, '/config/recipients'],
        [{ channel_type: 'email', config: { recipients: ['ok@example.com', 'not an address'] } }, '/config/recipients/1'],
        [{ channel_type: 'email', config: { recipients: ['ok@example.com', 42] } }, '/config/recipients/1'],
        [{ channel_type: 'telegram', config: { bot_token: 'nope', chat_id: 1 } }, '/config/bot_token'],
        [{ channel_type: 'telegram', config: { bot_token: BOT_TOKEN } }, '/config/chat_id'],
        [{ channel_type: 'telegram', config: { bot_token: BOT_TOKEN, chat_id: 'general' } }, '/config/chat_id'],
        [{ channel_type: 'telegram', config: { bot_token: BOT_TOKEN, chat_id: 1.5 } }, '/config/chat_id'],
        [{ channel_type: 'slack', config: { webhook_url: 'http://hooks.slack.com/services/x' } }, '/config/webhook_url'],
        [{ channel_type: 'slack', config: { webhook_url: 'hooks.slack.com/services/x' } }, '/config/webhook_url'],
        [{ channel_type: 'discord', config: { webhook_url: 'https://user:pw@discord.com/api/webhooks/1/x' } }, '/config/webhook_url'],
        [{ channel_type: 'discord', config: { webhook_url: 'https://discord.com/api/webhooks/1/x\n' } }, '/config/webhook_url'],
        [{ channel_type: 'pagerduty', config: { routing_key: 'short' } }, '/config/routing_key'],
        [{ channel_type: 'pagerduty', config: { routing_key: `${ROUTING_KEY}x` } }, '/config/routing_key'],
        [{ channel_type: 'webhook', config: { url: 'ftp://example.com/x' } }, '/config/url'],
        [{ channel_type: 'webhook', config: { url: 'https://example.com/x', secret: 'short' } }, '/config/secret'],
        [{ channel_type: 'webhook', config: { url: 'https://example.com/x', secret: 'whsec_c2hvcnQ=' } }, '/config/secret'],
        [{ channel_type: 'webhook', config: { url: 'https://example.com/x', secret: 123 } }, '/config/secret'],
        [{ channel_type: 'webhook', config: { url: `https://example.com/${'a'.repeat(2100)}` } }, '/config/url'],
        [{ channel_type: 'webhook', config: ['not', 'an', 'object'] }, '/config'],
        [{ channel_type: 'webhook' }, '/config'],
      ];
      for (const [body, field] of bad) {
        const res = await create(t, u.token, { name: 'x', ...body });
        const envelope = expectEnvelope(res, 400, 'validation_failed');
        assert.equal(envelope.details[0].field, field, `${JSON.stringify(body).slice(0, 120)} → ${res.raw}`);
      }
      expectEnvelope(await create(t, u.token, { name: 'bad\nname', channel_type: 'webhook', config: { url: 'https://example.com/x' } }), 400, 'validation_failed');
      expectEnvelope(await create(t, u.token, { name: '   ', channel_type: 'webhook', config: { url: 'https://example.com/x' } }), 400, 'validation_failed');
      assert.deepEqual((await api(t, 'GET', '/api/v1/channels', { token: u.token })).body.channels, []);
    });

    test(`an account holds at most ${CHANNELS_MAX} channels: the next is 409 channel_limit_reached`, async () => {
      const u = await registerUser(t);
      const body = { name: 'n', channel_type: 'webhook', config: { url: 'https://example.com/x' } };
      const results = await Promise.all(Array.from({ length: CHANNELS_MAX + 3 }, () => create(t, u.token, body)));
      assert.equal(results.filter((r) => r.status === 201).length, CHANNELS_MAX);
      for (const res of results.filter((r) => r.status !== 201)) expectEnvelope(res, 409, 'channel_limit_reached');
      assert.equal((await api(t, 'GET', '/api/v1/channels', { token: u.token })).body.channels.length, CHANNELS_MAX);
      const other = await registerUser(t);
      assert.equal((await create(t, other.token, body)).status, 201);
    });
  });

  describe('secrets at rest', () => {
    test('the stored row reveals no bot token, routing key, webhook path or signing secret', async () => {
      const u = await registerUser(t);
      const secrets = [BOT_TOKEN, ROUTING_KEY, '/services/T000/B000', 'hooks/kiln', 'token=abc123', 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'];
      const ids = [
        (await created(t, u.token, { name: 'tg', channel_type: 'telegram', config: { bot_token: BOT_TOKEN, chat_id: 42 } })).id,
        (await created(t, u.token, { name: 'pd', channel_type: 'pagerduty', config: { routing_key: ROUTING_KEY } })).id,
        (await created(t, u.token, { name: 'sl', channel_type: 'slack', config: { webhook_url: SLACK_URL } })).id,
        (await created(t, u.token, { name: 'wh', channel_type: 'webhook', config: { url: WEBHOOK_URL, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' } })).id,
      ];
      const rows = await t.store.db.selectFrom('channels').selectAll().where('id', 'in', ids).execute();
      assert.equal(rows.length, 4);
      const dump = JSON.stringify(rows);
      for (const secret of secrets) assert.ok(!dump.includes(secret), `${secret} readable in the store`);
      for (const row of rows) assert.match(row.config, /^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    });

    test('a sealed config moved onto another channel row does not open', async () => {
      const u = await registerUser(t);
      const a = await created(t, u.token, { name: 'a', channel_type: 'pagerduty', config: { routing_key: ROUTING_KEY } });
      const b = await created(t, u.token, { name: 'b', channel_type: 'pagerduty', config: { routing_key: 'B'.repeat(32) } });
      const sealed = await t.store.db.selectFrom('channels').select('config').where('id', '=', a.id).executeTakeFirstOrThrow();
      await t.store.db.updateTable('channels').set({ config: sealed.config }).where('id', '=', b.id).execute();
      const res = await api(t, 'GET', `/api/v1/channels/${b.id}`, { token: u.token });
      assert.equal(res.status, 200);
      assert.equal(res.body.config, null);
      const sent = await api(t, 'POST', `/api/v1/channels/${b.id}/test`, { token: u.token });
      assert.equal(sent.body.success, false);
      assert.match(sent.body.error, /cannot be decrypted/);
    });
  });

  describe('PUT /channels/:id', () => {
    test('changes name and enabled; a config left out stays', async () => {
      const u = await registerUser(t);
      const channel = await created(t, u.token, { name: 'pd', channel_type: 'pagerduty', config: { routing_key: ROUTING_KEY } });
      t.clock.advance(1000);
      const res = await api(t, 'PUT', `/api/v1/channels/${channel.id}`, { token: u.token, body: { name: 'on call', enabled: false } });
      assert.equal(res.status, 200, res.raw);
      assert.deepEqual(res.body, { ...channel, name: 'on call', enabled: false, updated_at: t.clock.now().toISOString() });
    });

    test('a masked value sent back unchanged keeps the stored secret; a new value replaces it', async () => {
      const u = await registerUser(t);
      const channel = await created(t, u.token, { name: 'tg', channel_type: 'telegram', config: { bot_token: BOT_TOKEN, chat_id: 1 } });
      const kept = await api(t, 'PUT', `/api/v1/channels/${channel.id}`, { token: u.token, body: { config: { ...channel.config, chat_id: '@ops_room' } } });
      assert.equal(kept.status, 200, kept.raw);
      assert.deepEqual(kept.body.config, { bot_token: '1234****saw1', chat_id: '@ops_room' });
      const row = await t.store.db.selectFrom('channels').select('config').where('id', '=', channel.id).executeTakeFirstOrThrow();
      // The stored token is still the real one: the service can open it and it masks the same.
      assert.notEqual(row.config, '');
      const other = '987654321:BBHdqTcvCH1vGWJxfSeofSAs0K5PALDzzzz';
      const replaced = await api(t, 'PUT', `/api/v1/channels/${channel.id}`, { token: u.token, body: { config: { bot_token: other, chat_id: 1 } } });
      assert.equal(replaced.body.config.bot_token, '9876****zzzz');
      const wrongMask = await api(t, 'PUT', `/api/v1/channels/${channel.id}`, { token: u.token, body: { config: { bot_token: '1234****saw1', chat_id: 1 } } });
      assert.equal(expectEnvelope(wrongMask, 400, 'validation_failed').details[0].field, '/config/bot_token');
    });

    test('webhook: masked url and secret keep theirs; secret null removes it; a changed host is not the mask', async () => {
      const u = await registerUser(t);
      const channel = await created(t, u.token, { name: 'wh', channel_type: 'webhook', config: { url: WEBHOOK_URL, secret: 'a-shared-secret' } });
      assert.deepEqual(channel.config, { url: 'https://receiver.example.com/****', secret: '****' });
      const same = await api(t, 'PUT', `/api/v1/channels/${channel.id}`, { token: u.token, body: { config: channel.config } });
      assert.deepEqual(same.body.config, channel.config);
      const otherHost = await api(t, 'PUT', `/api/v1/channels/${channel.id}`, { token: u.token, body: { config: { url: 'https://elsewhere.example.com/****' } } });
      assert.equal(expectEnvelope(otherHost, 400, 'validation_failed').details[0].field, '/config/url');
      const noSecret = await api(t, 'PUT', `/api/v1/channels/${channel.id}`, { token: u.token, body: { config: { url: channel.config.url, secret: null } } });
      assert.deepEqual(noSecret.body.config, { url: 'https://receiver.example.com/****', secret: null });
    });

    test('channel_type cannot change; bad config changes nothing; unknown id 404', async () => {
      const u = await registerUser(t);
      const channel = await created(t, u.token, { name: 'pd', channel_type: 'pagerduty', config: { routing_key: ROUTING_KEY } });
      expectEnvelope(await api(t, 'PUT', `/api/v1/channels/${channel.id}`, { token: u.token, body: { channel_type: 'slack' } }), 400, 'validation_failed');
      expectEnvelope(await api(t, 'PUT', `/api/v1/channels/${channel.id}`, { token: u.token, body: { name: 'new', config: { routing_key: 'x' } } }), 400, 'validation_failed');
      assert.deepEqual((await api(t, 'GET', `/api/v1/channels/${channel.id}`, { token: u.token })).body, channel);
      expectEnvelope(await api(t, 'PUT', '/api/v1/channels/chn_unknown0000000000000', { token: u.token, body: { name: 'x' } }), 404, 'not_found');
    });
  });

  describe('DELETE /channels/:id', () => {
    test('204, then the channel and its deliveries are gone', async () => {
      const u = await registerUser(t);
      const channel = await created(t, u.token, { name: 'wh', channel_type: 'webhook', config: { url: 'http://127.0.0.1:9/nothing' } });
      await api(t, 'POST', `/api/v1/channels/${channel.id}/test`, { token: u.token });
      const res = await api(t, 'DELETE', `/api/v1/channels/${channel.id}`, { token: u.token });
      assert.equal(res.status, 204);
      assert.equal(res.raw, '');
      expectEnvelope(await api(t, 'GET', `/api/v1/channels/${channel.id}`, { token: u.token }), 404, 'not_found');
      expectEnvelope(await api(t, 'DELETE', `/api/v1/channels/${channel.id}`, { token: u.token }), 404, 'not_found');
      assert.equal((await t.store.db.selectFrom('deliveries').select('id').where('channel_id', '=', channel.id).execute()).length, 0);
    });
  });

  describe('tenancy and scopes', () => {
    test('another account\'s channel answers exactly like a missing one, and is untouched', async () => {
      const a = await registerUser(t);
      const b = await registerUser(t);
      const bChannel = await created(t, b.token, { name: 'b', channel_type: 'pagerduty', config: { routing_key: ROUTING_KEY } });
      const missing = 'chn_doesNotExist000000000';
      const calls: Array<['GET' | 'PUT' | 'DELETE' | 'POST', string, unknown?]> = [
        ['GET', ''], ['PUT', '', { name: 'pwned' }], ['DELETE', ''], ['POST', '/test'], ['GET', '/deliveries'],
      ];
      for (const [method, suffix, body] of calls) {
        const foreign = await api(t, method, `/api/v1/channels/${bChannel.id}${suffix}`, { token: a.token, body });
        const absent = await api(t, method, `/api/v1/channels/${missing}${suffix}`, { token: a.token, body });
        expectEnvelope(foreign, 404, 'not_found');
        expectEnvelope(absent, 404, 'not_found');
        assert.equal(foreign.body.message, absent.body.message);
      }
      assert.deepEqual((await api(t, 'GET', '/api/v1/channels', { token: a.token })).body.channels, []);
      assert.deepEqual((await api(t, 'GET', `/api/v1/channels/${bChannel.id}`, { token: b.token })).body, bChannel);
    });

    test('a read key lists and reads; every change needs write (403 insufficient_scope)', async () => {
      const u = await registerUser(t);
      const channel = await created(t, u.token, { name: 'pd', channel_type: 'pagerduty', config: { routing_key: ROUTING_KEY } });
      const read = await createKey(t, u.token, ['read']);
      const write = await createKey(t, u.token, ['write']);
      assert.equal((await api(t, 'GET', '/api/v1/channels', { token: read.secret })).status, 200);
      assert.equal((await api(t, 'GET', `/api/v1/channels/${channel.id}`, { token: read.secret })).status, 200);
      assert.equal((await api(t, 'GET', `/api/v1/channels/${channel.id}/deliveries`, { token: read.secret })).status, 200);
      const body = { name: 'x', channel_type: 'pagerduty', config: { routing_key: ROUTING_KEY } };
      expectEnvelope(await api(t, 'POST', '/api/v1/channels', { token: read.secret, body }), 403, 'insufficient_scope');
      expectEnvelope(await api(t, 'PUT', `/api/v1/channels/${channel.id}`, { token: read.secret, body: { name: 'y' } }), 403, 'insufficient_scope');
      expectEnvelope(await api(t, 'DELETE', `/api/v1/channels/${channel.id}`, { token: read.secret }), 403, 'insufficient_scope');
      expectEnvelope(await api(t, 'POST', `/api/v1/channels/${channel.id}/test`, { token: read.secret }), 403, 'insufficient_scope');
      assert.equal((await api(t, 'POST', '/api/v1/channels', { token: write.secret, body })).status, 201);
      expectEnvelope(await api(t, 'GET', '/api/v1/channels'), 401, 'unauthorized');
      assert.deepEqual((await api(t, 'GET', `/api/v1/channels/${channel.id}`, { token: u.token })).body, channel);
    });
  });
});
