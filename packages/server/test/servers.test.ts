import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sha256Hex } from '../src/lib/crypto.js';
import { api, createKey, describeEachStore, expectEnvelope, registerUser } from './helpers/app.js';
import { createServer, trashServer } from './helpers/servers.js';

const SERVER_FIELDS = [
  'active_alerts', 'collector_version', 'created_at', 'disk_health_rollup', 'dmi_product', 'dmi_vendor', 'hostname', 'id',
  'ip', 'ipmi_sensors_count', 'last_seen_at', 'name', 'os_type', 'os_version', 'profile', 'status', 'suspended_at',
  'suspended_reason', 'tags',
];

describeEachStore('POST /servers', (t) => {
  test('registers a server and returns its collector key once, with the ingest URL', async () => {
    const u = await registerUser(t);
    const res = await api(t, 'POST', '/api/v1/servers', { token: u.token, body: { name: 'web-01', tags: ['prod'] } });
    assert.equal(res.status, 201);
    assert.deepEqual(Object.keys(res.body).sort(), ['ingest_url', 'message', 'server', 'success']);
    assert.equal(res.body.success, true);
    const server = res.body.server;
    assert.deepEqual(Object.keys(server).sort(), ['api_key', 'hostname', 'id', 'name', 'tags']);
    assert.match(server.id, /^srv_[A-Za-z0-9_-]{20}$/);
    assert.match(server.api_key, /^col_[0-9a-f]{40}$/);
    assert.equal(server.name, 'web-01');
    assert.equal(server.hostname, 'web-01');
    assert.deepEqual(server.tags, ['prod']);
    assert.match(res.body.ingest_url, /^http:\/\/localhost(:\d+)?\/api\/v1\/ingest$/);
    assert.equal(typeof res.body.message, 'string');

    const row = await t.store.db.selectFrom('servers').selectAll().where('id', '=', server.id).executeTakeFirstOrThrow();
    assert.equal(row.collector_key_hash, sha256Hex(server.api_key));
    assert.ok(!JSON.stringify(row).includes(server.api_key), 'the collector key itself is not stored');
    assert.equal(row.name_is_placeholder, 0);
    assert.equal(row.created_at, t.clock.now().toISOString());
  });

  test('without a name gets a pending-xxxxxx placeholder and no hostname, even with no body at all', async () => {
    const u = await registerUser(t);
    for (const options of [{ body: {} }, {}]) {
      const res = await api(t, 'POST', '/api/v1/servers', { token: u.token, ...options });
      assert.equal(res.status, 201, res.raw);
      assert.match(res.body.server.name, /^pending-[a-z0-9]{6}$/);
      assert.equal(res.body.server.hostname, null);
      assert.deepEqual(res.body.server.tags, []);
      const row = await t.store.db.selectFrom('servers').select(['name_is_placeholder', 'hostname']).where('id', '=', res.body.server.id).executeTakeFirstOrThrow();
      assert.equal(row.name_is_placeholder, 1);
    }
  });

  test('hostname defaults to the name when that is a hostname, lowercased; else stays null', async () => {
    const u = await registerUser(t);
    assert.equal((await createServer(t, u.token, { name: 'DB-02.Example.COM' })).hostname, 'db-02.example.com');
    assert.equal((await createServer(t, u.token, { name: 'My database' })).hostname, null);
    assert.equal((await createServer(t, u.token, { name: '1st-box' })).hostname, null);
    const explicit = await createServer(t, u.token, { name: 'Database', hostname: 'Db-03.Internal' });
    assert.equal(explicit.hostname, 'db-03.internal');
    assert.equal(explicit.name, 'Database');
  });

  test('hostname follows RFC 1035', async () => {
    const u = await registerUser(t);
    const label63 = `a${'b'.repeat(62)}`;
    const longest = [label63, label63, label63, `a${'c'.repeat(60)}`].join('.');
    assert.equal(longest.length, 253);
    for (const hostname of ['a', 'x1', 'a-b.c-d.e1', label63, longest]) {
      assert.equal((await createServer(t, u.token, { hostname })).hostname, hostname, hostname);
    }
    const bad = ['', '1abc', '-abc', 'abc-', 'a..b', '.abc', 'abc.', 'a_b', 'a b', 'héllo', `a${'b'.repeat(63)}`, `${longest}x`, 'a.1b', 42];
    for (const hostname of bad) {
      const res = await api(t, 'POST', '/api/v1/servers', { token: u.token, body: { hostname } });
      assert.equal(expectEnvelope(res, 400, 'validation_failed').details[0].field, '/hostname', String(hostname));
    }
  });

  test('name: 1-100 characters after trimming, counted in characters, no control characters', async () => {
    const u = await registerUser(t);
    assert.equal((await createServer(t, u.token, { name: '  spaced out  ' })).name, 'spaced out');
    for (const name of ['é'.repeat(100), '😀'.repeat(100), '服务器'.repeat(33), ` ${'n'.repeat(100)} `]) {
      assert.equal((await createServer(t, u.token, { name })).name, name.trim());
    }
    const bad = ['', '   ', 'n'.repeat(101), '😀'.repeat(101), 'bell\u0007', 'tab\there', 'trailing newline\n', 'c1\u0085', 'del\u007f', 'x'.repeat(100_000), 42, null, ['a'], { a: 1 }];
    for (const name of bad) {
      const res = await api(t, 'POST', '/api/v1/servers', { token: u.token, body: { name } });
      const envelope = expectEnvelope(res, 400, 'validation_failed');
      assert.equal(envelope.details[0].field, '/name', JSON.stringify(name).slice(0, 40));
    }
  });

  test('tags: at most 20, each 1-50 characters after trimming; duplicates removed in first order', async () => {
    const u = await registerUser(t);
    const server = await createServer(t, u.token, { tags: [' prod ', 'eu', 'prod', 'db', 'eu', 'Prod'] });
    assert.deepEqual(server.tags, ['prod', 'eu', 'db', 'Prod']);
    const rows = await t.store.db.selectFrom('server_tags').select('tag').where('server_id', '=', server.id).orderBy('tag').execute();
    assert.deepEqual(rows.map((r) => r.tag), ['Prod', 'db', 'eu', 'prod']);
    assert.equal((await createServer(t, u.token, { tags: Array.from({ length: 20 }, (_, i) => `t${i}`) })).tags.length, 20);
    assert.deepEqual((await createServer(t, u.token, { tags: ['🔥'.repeat(50)] })).tags, ['🔥'.repeat(50)]);

    const cases: [unknown, string][] = [
      [Array.from({ length: 21 }, (_, i) => `t${i}`), '/tags'],
      [['a', 'b', 'c', 'x'.repeat(51)], '/tags/3'],
      [['a', '   '], '/tags/1'],
      [['a', ''], '/tags/1'],
      [['line\nbreak'], '/tags/0'],
      [['a', 'b', 7], '/tags/2'],
      ['prod', '/tags'],
      [null, '/tags'],
    ];
    for (const [tags, field] of cases) {
      const res = await api(t, 'POST', '/api/v1/servers', { token: u.token, body: { tags } });
      assert.equal(expectEnvelope(res, 400, 'validation_failed').details[0].field, field, JSON.stringify(tags).slice(0, 60));
    }
  });

  test('profile: null or marketplace_gpu; anything else is 400 with the exact message', async () => {
    const u = await registerUser(t);
    const gpu = await createServer(t, u.token, { name: 'gpu', profile: 'marketplace_gpu' });
    assert.equal((await api(t, 'GET', `/api/v1/servers/${gpu.id}`, { token: u.token })).body.profile, 'marketplace_gpu');
    const general = await createServer(t, u.token, { name: 'general', profile: null });
    assert.equal((await api(t, 'GET', `/api/v1/servers/${general.id}`, { token: u.token })).body.profile, null);

    for (const profile of ['gaming', 'MARKETPLACE_GPU', '', 'x'.repeat(5000)]) {
      const res = await api(t, 'POST', '/api/v1/servers', { token: u.token, body: { profile } });
      const envelope = expectEnvelope(res, 400, 'validation_failed');
      assert.ok(envelope.message.startsWith('profile must be null or one of: marketplace_gpu'), envelope.message);
      assert.equal(envelope.details[0].field, '/profile');
    }
    const wrongType = await api(t, 'POST', '/api/v1/servers', { token: u.token, body: { profile: 3 } });
    assert.equal(expectEnvelope(wrongType, 400, 'validation_failed').details[0].field, '/profile');
  });

  test('unknown fields are dropped, not stored and not rejected', async () => {
    const u = await registerUser(t);
    const res = await api(t, 'POST', '/api/v1/servers', {
      token: u.token,
      body: { name: 'extra', ip: '10.0.0.1', os_type: 'linux', status: 'suspended', collector_key_hash: 'x', cores: 64, trashed_at: '2020-01-01T00:00:00.000Z' },
    });
    assert.equal(res.status, 201);
    const got = await api(t, 'GET', `/api/v1/servers/${res.body.server.id}`, { token: u.token });
    assert.equal(got.body.ip, null);
    assert.equal(got.body.os_type, null);
    assert.equal(got.body.status, 'active');
  });

  test('bad bodies and credentials', async () => {
    const u = await registerUser(t);
    expectEnvelope(await api(t, 'POST', '/api/v1/servers', { token: u.token, rawBody: '{"name":', headers: { 'content-type': 'application/json' } }), 400, 'invalid_json');
    expectEnvelope(await api(t, 'POST', '/api/v1/servers', { token: u.token, body: ['web'] }), 400, 'validation_failed');
    expectEnvelope(await api(t, 'POST', '/api/v1/servers', { token: u.token, body: 'web' }), 400, 'validation_failed');
    expectEnvelope(await api(t, 'POST', '/api/v1/servers', { body: { name: 'x' } }), 401, 'unauthorized');
    const reader = await createKey(t, u.token, ['read']);
    expectEnvelope(await api(t, 'POST', '/api/v1/servers', { token: reader.secret, body: { name: 'x' } }), 403, 'insufficient_scope');
    const writer = await createKey(t, u.token, ['write']);
    assert.equal((await api(t, 'POST', '/api/v1/servers', { token: writer.secret, body: { name: 'x' } })).status, 201);
  });
});

describeEachStore('POST /servers with PUBLIC_URL', (t) => {
  test('ingest_url uses PUBLIC_URL as the origin', async () => {
    const u = await registerUser(t);
    const res = await api(t, 'POST', '/api/v1/servers', { token: u.token, body: {} });
    assert.equal(res.body.ingest_url, 'https://kiln.example.com/api/v1/ingest');
  });
}, { config: { publicUrl: 'https://kiln.example.com' } });

describeEachStore('GET /servers/:server_id', (t) => {
  test('returns the list fields plus config_overrides, free_analysis_used and hardware, with agent fields null until a snapshot', async () => {
    const u = await registerUser(t);
    const server = await createServer(t, u.token, { name: 'web-01', tags: ['a', 'b'] });
    const res = await api(t, 'GET', `/api/v1/servers/${server.id}`, { token: u.token });
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), [...SERVER_FIELDS, 'config_overrides', 'free_analysis_used', 'hardware'].sort());
    assert.deepEqual(res.body, {
      id: server.id, name: 'web-01', hostname: 'web-01', ip: null, os_type: null, os_version: null, status: 'active',
      suspended_at: null, suspended_reason: null, last_seen_at: null, collector_version: null, active_alerts: 0,
      disk_health_rollup: 'healthy', created_at: t.clock.now().toISOString(), tags: ['a', 'b'], dmi_vendor: null,
      dmi_product: null, ipmi_sensors_count: null, profile: null, config_overrides: {}, free_analysis_used: false, hardware: null,
    });
  });

  test('unknown, trashed and other accounts\' servers are 404 not_found, never 403', async () => {
    const owner = await registerUser(t);
    const stranger = await registerUser(t);
    const server = await createServer(t, owner.token, { name: 'mine' });
    expectEnvelope(await api(t, 'GET', `/api/v1/servers/${server.id}`, { token: stranger.token }), 404, 'not_found');
    expectEnvelope(await api(t, 'GET', '/api/v1/servers/srv_doesnotexist0000000', { token: owner.token }), 404, 'not_found');
    await trashServer(t, owner.token, server.id);
    expectEnvelope(await api(t, 'GET', `/api/v1/servers/${server.id}`, { token: owner.token }), 404, 'not_found');
  });

  test('a read-only key may read', async () => {
    const u = await registerUser(t);
    const server = await createServer(t, u.token);
    const reader = await createKey(t, u.token, ['read']);
    assert.equal((await api(t, 'GET', `/api/v1/servers/${server.id}`, { token: reader.secret })).status, 200);
  });
});

describeEachStore('PATCH /servers/:server_id', (t) => {
  test('changes name, tags and profile and answers the full server', async () => {
    const u = await registerUser(t);
    const server = await createServer(t, u.token, { tags: ['old', 'keep'] });
    const res = await api(t, 'PATCH', `/api/v1/servers/${server.id}`, {
      token: u.token,
      body: { name: '  Web One ', tags: ['keep', 'new', 'keep'], profile: 'marketplace_gpu' },
    });
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), [...SERVER_FIELDS, 'config_overrides', 'free_analysis_used', 'hardware'].sort());
    assert.equal(res.body.name, 'Web One');
    assert.deepEqual(res.body.tags, ['keep', 'new']);
    assert.equal(res.body.profile, 'marketplace_gpu');
    assert.equal(res.body.hostname, null, 'a later name does not fill the hostname');

    const row = await t.store.db.selectFrom('servers').select(['name_is_placeholder']).where('id', '=', server.id).executeTakeFirstOrThrow();
    assert.equal(row.name_is_placeholder, 0);
    const tags = await t.store.db.selectFrom('server_tags').select('tag').where('server_id', '=', server.id).orderBy('tag').execute();
    assert.deepEqual(tags.map((r) => r.tag), ['keep', 'new']);
    assert.deepEqual((await api(t, 'GET', `/api/v1/servers/${server.id}`, { token: u.token })).body, res.body);
  });

  test('omitted fields stay; profile null clears; tags [] clears; an empty body changes nothing', async () => {
    const u = await registerUser(t);
    const server = await createServer(t, u.token, { name: 'n', tags: ['a'], profile: 'marketplace_gpu' });
    const url = `/api/v1/servers/${server.id}`;
    const before = (await api(t, 'GET', url, { token: u.token })).body;
    assert.deepEqual((await api(t, 'PATCH', url, { token: u.token, body: {} })).body, before);
    const cleared = await api(t, 'PATCH', url, { token: u.token, body: { profile: null } });
    assert.equal(cleared.body.profile, null);
    assert.equal(cleared.body.name, 'n');
    assert.deepEqual(cleared.body.tags, ['a']);
    const untagged = await api(t, 'PATCH', url, { token: u.token, body: { tags: [] } });
    assert.deepEqual(untagged.body.tags, []);
    assert.equal((await t.store.db.selectFrom('server_tags').selectAll().where('server_id', '=', server.id).execute()).length, 0);
  });

  test('hostname in the body is 400 whatever its value; unknown fields are dropped', async () => {
    const u = await registerUser(t);
    const server = await createServer(t, u.token, { name: 'web-01' });
    const url = `/api/v1/servers/${server.id}`;
    for (const hostname of ['web-02', 'web-01', null, 5]) {
      const res = await api(t, 'PATCH', url, { token: u.token, body: { name: 'changed', hostname } });
      assert.equal(expectEnvelope(res, 400, 'validation_failed').details[0].field, '/hostname');
    }
    assert.equal((await api(t, 'GET', url, { token: u.token })).body.name, 'web-01', 'a rejected update changes nothing');
    const extra = await api(t, 'PATCH', url, { token: u.token, body: { ip: '10.0.0.9', status: 'suspended', id: 'srv_other' } });
    assert.equal(extra.status, 200);
    assert.equal(extra.body.ip, null);
    assert.equal(extra.body.status, 'active');
    assert.equal(extra.body.id, server.id);
  });

  test('the registration rules apply', async () => {
    const u = await registerUser(t);
    const server = await createServer(t, u.token, { name: 'rules' });
    const url = `/api/v1/servers/${server.id}`;
    const cases: [Record<string, unknown>, string][] = [
      [{ name: '' }, '/name'],
      [{ name: 'x'.repeat(101) }, '/name'],
      [{ name: 'a\u0000b' }, '/name'],
      [{ name: null }, '/name'],
      [{ tags: ['ok', 'ok', 'ok', 'y'.repeat(51)] }, '/tags/3'],
      [{ tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, '/tags'],
      [{ profile: 'bogus' }, '/profile'],
    ];
    for (const [body, field] of cases) {
      const res = await api(t, 'PATCH', url, { token: u.token, body });
      const envelope = expectEnvelope(res, 400, 'validation_failed');
      assert.equal(envelope.details[0].field, field, JSON.stringify(body).slice(0, 60));
      if (field === '/profile') assert.ok(envelope.message.startsWith('profile must be null or one of: marketplace_gpu'));
    }
  });

  test('unknown, trashed and other accounts\' servers are 404; a read-only key is 403', async () => {
    const owner = await registerUser(t);
    const stranger = await registerUser(t);
    const server = await createServer(t, owner.token, { name: 'mine' });
    expectEnvelope(await api(t, 'PATCH', `/api/v1/servers/${server.id}`, { token: stranger.token, body: { name: 'stolen' } }), 404, 'not_found');
    expectEnvelope(await api(t, 'PATCH', '/api/v1/servers/srv_nope', { token: owner.token, body: { name: 'x' } }), 404, 'not_found');
    const reader = await createKey(t, owner.token, ['read']);
    expectEnvelope(await api(t, 'PATCH', `/api/v1/servers/${server.id}`, { token: reader.secret, body: { name: 'x' } }), 403, 'insufficient_scope');
    await trashServer(t, owner.token, server.id);
    expectEnvelope(await api(t, 'PATCH', `/api/v1/servers/${server.id}`, { token: owner.token, body: { name: 'x' } }), 404, 'not_found');
    const row = await t.store.db.selectFrom('servers').select('name').where('id', '=', server.id).executeTakeFirstOrThrow();
    assert.equal(row.name, 'mine');
  });
});
