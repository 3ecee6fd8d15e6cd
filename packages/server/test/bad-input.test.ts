import assert from 'node:assert/strict';
import { test } from 'node:test';
import { api, describeEachStore, expectEnvelope, registerUser, type ApiResponse, type TestApp } from './helpers/app.js';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
interface Operation { method: Method; path: string; bodyProps: Record<string, { type?: unknown }> }

/** Every operation of the API, read from the OpenAPI document the app generates. */
async function operations(t: TestApp): Promise<Operation[]> {
  const doc = (await api(t, 'GET', '/api/v1/openapi.json')).body;
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const schema = op.requestBody?.content?.['application/json']?.schema;
      ops.push({ method: method.toUpperCase() as Method, path: `/api/v1${path}`, bodyProps: schema?.properties ?? {} });
    }
  }
  return ops;
}

function withIds(path: string): string {
  return path.replace(/\{(\w+)\}/g, (_m, name: string) => `${name.replace(/_id$/, '').slice(0, 3)}_unknown0000000000000`);
}

function wrongType(type: unknown): unknown {
  switch (type) {
    case 'string': return 12345;
    case 'number': case 'integer': return 'not a number';
    case 'boolean': return 'yes';
    case 'array': return { not: 'an array' };
    case 'object': return ['not', 'an', 'object'];
    default: return { unexpected: true };
  }
}

function assertClientError(res: ApiResponse, what: string): void {
  assert.ok(res.status < 500, `${what} → ${res.status} ${res.raw}`);
  if (res.status >= 400) {
    try {
      expectEnvelope(res, res.status, res.body?.error);
    } catch (err) {
      throw new Error(`${what}: ${(err as Error).message}`);
    }
    assert.ok(res.body.message.length > 0, `${what}: empty message`);
  }
}

describeEachStore('bad input never yields a 5xx', (t) => {
  test('every operation, with hostile bodies, query strings and unknown ids', async () => {
    const u = await registerUser(t);
    const ops = await operations(t);
    assert.ok(ops.length >= 25, `only ${ops.length} operations found`);
    const json = { 'content-type': 'application/json' };
    for (const op of ops) {
      const path = withIds(op.path);
      const what = `${op.method} ${op.path}`;
      const send = (options: Parameters<typeof api>[3]) => api(t, op.method, path, { token: u.token, ...options });
      assertClientError(await send({}), `${what} (no body)`);
      if (op.method === 'GET' || op.method === 'DELETE') {
        const hostileQuery = `${path}${path.includes('?') ? '&' : '?'}limit=-1&cursor=%00%ff&tag=${'x'.repeat(5000)}&status=\u{1F525}&from=yesterday&confirm=%0d%0aX:1`;
        assertClientError(await api(t, op.method, hostileQuery, { token: u.token }), `${what} (hostile query)`);
        continue;
      }
      for (const rawBody of ['{', '{"a":', 'null', '[]', '"text"', '{"__proto__":{"x":1}}', '\u0000']) {
        assertClientError(await send({ rawBody, headers: json }), `${what} raw ${JSON.stringify(rawBody)}`);
      }
      const names = Object.keys(op.bodyProps);
      const wrong = Object.fromEntries(names.map((n) => [n, wrongType(op.bodyProps[n]!.type)]));
      const huge = Object.fromEntries(names.map((n) => [n, 'x'.repeat(200_000)]));
      const unicode = Object.fromEntries(names.map((n) => [n, '\u202e\u{1F525}\u0301ẞ\uFFFD<script>\'"; DROP TABLE servers;--']));
      const nested = Object.fromEntries(names.map((n) => [n, JSON.parse('['.repeat(500) + ']'.repeat(500))]));
      for (const [label, body] of Object.entries({ wrong, huge, unicode, nested, empty: {} })) {
        assertClientError(await send({ body }), `${what} ${label}`);
      }
    }
  });

  test('invalid UTF-8 in a JSON body is a client error', async () => {
    const u = await registerUser(t);
    const payload = Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}')]);
    const res = await t.app.inject({
      method: 'POST', url: '/api/v1/servers', payload,
      headers: { authorization: `Bearer ${u.token}`, 'content-type': 'application/json' },
    });
    expectEnvelope({ status: res.statusCode, body: res.json(), headers: res.headers, raw: res.body }, 400, 'invalid_json');
    assert.equal((await api(t, 'GET', '/api/v1/servers', { token: u.token })).body.servers.length, 0);
  });
});
