import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import { ERROR_CODES } from '../src/http/error-codes.js';
import '../src/http/route-config.js';
import { renderErrorsPage } from '../src/features/meta/errors-page.js';
import { escapeHtml, slug } from '../src/features/meta/html.js';
import { documentRouteAccess } from '../src/features/meta/openapi-access.js';
import { renderReferencePage, type OpenApiDocument } from '../src/features/meta/reference-page.js';
import { api, describeEachStore, expectEnvelope, registerUser } from './helpers/app.js';

/** Routes the OpenAPI document leaves out on purpose (schema.hide). */
const HIDDEN = new Set(['GET /api/v1/openapi.json']);

/** Every route of the app as `METHOD /path`, read from Fastify's own route tree. */
function registeredRoutes(app: FastifyInstance): string[] {
  const routes: string[] = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^((?:[│ ] {3})*)[├└]── (\S+)(?: \(([^)]+)\))?/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    const path = (stack[depth - 1] ?? '') + m[2]!;
    stack.length = depth;
    stack.push(path);
    for (const method of m[3]?.split(',').map((s) => s.trim()) ?? []) routes.push(`${method} ${path}`);
  }
  return routes;
}

/** `/servers/:server_id` → `/servers/{server_id}`, the OpenAPI form. */
const openapiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

describeEachStore('GET /api/v1/openapi.json', (t) => {
  test('is a public OpenAPI 3.1 document generated from the route schemas', async () => {
    const res = await api(t, 'GET', '/api/v1/openapi.json');
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.equal(res.body.openapi, '3.1.0');
    assert.equal(res.body.servers[0].url, '/api/v1');
    const register = res.body.paths['/auth/register'].post;
    const schema = register.requestBody.content['application/json'].schema;
    assert.deepEqual(schema.required, ['email', 'password']);
    assert.equal(schema.properties.password.minLength, 12);
    assert.ok(register.responses['201']);
    assert.ok(res.body.paths['/billing/status'].get);
    assert.deepEqual(res.body.paths['/version'].get.security, []);
  });

  test('every route under /api/v1 appears, except the hidden ones', async () => {
    const doc = (await api(t, 'GET', '/api/v1/openapi.json')).body;
    const routes = registeredRoutes(t.app).filter((r) => r.split(' ')[1]!.startsWith('/api/v1/') && !r.startsWith('HEAD '));
    assert.ok(routes.includes('POST /api/v1/auth/register') && routes.includes('GET /api/v1/version'), routes.join('\n'));
    const missing = routes
      .filter((r) => !HIDDEN.has(r))
      .filter((r) => {
        const [method, path] = r.split(' ') as [string, string];
        return !doc.paths[openapiPath(path.slice('/api/v1'.length))]?.[method.toLowerCase()];
      });
    assert.deepEqual(missing, []);
    assert.equal(doc.paths['/openapi.json'], undefined);
  });
});

describeEachStore('GET /docs', (t) => {
  test('is an HTML reference with every operation of the OpenAPI document', async () => {
    const doc = (await api(t, 'GET', '/api/v1/openapi.json')).body as OpenApiDocument;
    const res = await api(t, 'GET', '/docs');
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /^text\/html; charset=utf-8/);
    assert.match(String(res.headers['content-security-policy']), /default-src 'none'/);
    const html = res.raw;
    for (const [path, item] of Object.entries(doc.paths ?? {})) {
      for (const method of Object.keys(item)) {
        assert.ok(html.includes(`<code>/api/v1${escapeHtml(path)}</code>`), path);
        assert.ok(html.includes(`id="op-${method}-${slug(`/api/v1${path}`)}"`), `${method} ${path}`);
      }
    }
    assert.ok(html.includes('id="tag-billing-legacy"'));
    assert.ok(html.includes('id="agent-versions"'));
    assert.ok(html.includes('href="/docs/errors"'));
    assert.ok(html.includes('<code>password</code></td><td>string</td><td>yes</td><td>length 12–256'));
    assert.doesNotMatch(html, /<script|<link|<iframe|@import|url\(|\ssrc=/i, "self-contained: nothing loaded from elsewhere");
    assert.equal((await api(t, 'GET', '/docs')).raw, html, 'rendered once, then served from memory');
  });

  test('/version, the one public route that declares it, is labelled Public', async () => {
    const html = (await api(t, 'GET', '/docs')).raw;
    const article = html.slice(html.indexOf('id="op-get-api-v1-version"'));
    assert.match(article.slice(0, article.indexOf('</article>')), /<span class="badge">Public<\/span>/);
  });
});

describeEachStore('GET /docs/errors', (t) => {
  test('has a section for every error code with status, retryable, summary and action', async () => {
    const res = await api(t, 'GET', '/docs/errors');
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    for (const [code, info] of Object.entries(ERROR_CODES)) {
      const start = res.raw.indexOf(`<section class="code" id="${code}">`);
      assert.ok(start >= 0, code);
      const section = res.raw.slice(start, res.raw.indexOf('</section>', start));
      assert.ok(section.includes(`HTTP ${info.status}`), code);
      assert.ok(section.includes(info.retryable ? 'retryable' : 'not retryable'), code);
      assert.ok(section.includes(escapeHtml(info.action.split('`')[0]!)), code);
    }
  });

  test('every documentation_url in an error envelope leads to an existing anchor', async () => {
    const u = await registerUser(t);
    const errors = [
      expectEnvelope(await api(t, 'GET', '/api/v1/nope'), 404, 'not_found'),
      expectEnvelope(await api(t, 'GET', '/api/v1/auth/me'), 401, 'unauthorized'),
      expectEnvelope(await api(t, 'DELETE', '/api/v1/version'), 405, 'method_not_allowed'),
      expectEnvelope(await api(t, 'POST', '/api/v1/billing/checkout', { token: u.token }), 410, 'gone'),
    ];
    for (const error of errors) {
      const url = new URL(error.documentation_url);
      assert.equal(url.pathname, '/docs/errors');
      assert.equal(url.hash, `#${error.error}`);
      const page = await api(t, 'GET', url.pathname);
      assert.equal(page.status, 200);
      assert.ok(page.raw.includes(`id="${error.error}"`), error.error);
    }
  });
});

describe('docs rendering', () => {
  test('escapes everything taken from schemas and the code list', () => {
    const evil = '<img src=x onerror=alert(1)>"\'&';
    const errors = renderErrorsPage({ bad: { status: 400, retryable: false, summary: evil, action: `\`${evil}\`` } });
    const reference = renderReferencePage({
      openapi: '3.1.0',
      info: { title: evil },
      servers: [{ url: '/api/v1' }],
      paths: { '/x': { post: { summary: evil, tags: [evil], requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { [evil]: { type: 'string', description: evil } } } } } }, responses: {} } } },
    });
    for (const html of [errors, reference]) {
      assert.doesNotMatch(html, /<img/);
      assert.ok(html.includes('&lt;img src=x onerror=alert(1)&gt;&quot;&#39;&amp;'));
    }
  });

  test('with documentRouteAccess wired into @fastify/swagger, labels come from the route config', async () => {
    const app = Fastify();
    await app.register(swagger, {
      openapi: { openapi: '3.1.0', info: { title: 'T', version: '1' }, servers: [{ url: '/api/v1' }], security: [{ bearer: [] }],
        components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } } },
      transform: documentRouteAccess as never,
    });
    const ok = async () => ({});
    await app.register(async (api) => {
      api.post('/open', { config: { auth: 'public' }, schema: { tags: ['A'] } }, ok);
      api.get('/read', { schema: { tags: ['A'] } }, ok);
      api.post('/write', { config: { scope: 'write' }, schema: { tags: ['A'] } }, ok);
      api.delete('/purge', { config: { scope: 'write', capability: 'servers:purge' }, schema: { tags: ['A'] } }, ok);
      api.post('/ingest', { config: { auth: 'collector' }, schema: { tags: ['A'] } }, ok);
    }, { prefix: '/api/v1' });
    await app.ready();
    const doc = app.swagger() as unknown as OpenApiDocument;
    assert.deepEqual(doc.paths!['/open']!.post.security, []);
    assert.equal(doc.paths!['/read']!.get.security, undefined, 'inherits the document default');
    const html = renderReferencePage(doc);
    const badge = (id: string) => {
      const article = html.slice(html.indexOf(`id="${id}"`));
      return /<span class="badge">([^<]+)<\/span>/.exec(article.slice(0, article.indexOf('</article>')))?.[1];
    };
    assert.equal(badge('op-post-api-v1-open'), 'Public');
    assert.equal(badge('op-get-api-v1-read'), 'Authenticated (read scope)');
    assert.equal(badge('op-post-api-v1-write'), 'Write scope');
    assert.equal(badge('op-delete-api-v1-purge'), 'Write scope + capability servers:purge');
    assert.equal(badge('op-post-api-v1-ingest'), 'Collector key');
    await app.close();
  });
});
