import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { BUNDLED_AGENT_VERSION } from '../src/config.js';
import { HOUR_MS, MINUTE_MS } from '../src/lib/clock.js';
import { agentVersionSource, distTagsUrl } from '../src/features/meta/agent-version.js';
import { api, describeEachStore, startApp, type TestApp } from './helpers/app.js';
import { FakeClock } from './helpers/clock.js';
import { storeKinds } from './helpers/stores.js';

const SERVER_VERSION = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version as string;
const PACKAGE = '@kiln/agent';

type Mode = 'ok' | 'error' | 'bad_json' | 'no_tag' | 'bad_version' | 'hang';

/** A package registry on loopback that serves dist-tags and counts what it is asked. */
class FakeRegistry {
  mode: Mode = 'ok';
  latest = '0.12.3';
  urls: string[] = [];
  /** When set, answers wait until release() is called. */
  private held: Array<() => void> | null = null;
  private server: Server = createServer((req, res) => this.handle(req, res));

  get hits(): number {
    return this.urls.length;
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  hold(): void {
    this.held = [];
  }

  release(): void {
    const waiting = this.held ?? [];
    this.held = null;
    for (const go of waiting) go();
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    this.urls.push(req.url ?? '');
    const answer = () => {
      if (this.mode === 'hang') return;
      if (this.mode === 'error') return void res.writeHead(500).end('{"error":"boom"}');
      res.writeHead(200, { 'content-type': 'application/json' });
      if (this.mode === 'bad_json') return void res.end('{"latest": ');
      if (this.mode === 'no_tag') return void res.end('{"next":"1.0.0-rc.1"}');
      if (this.mode === 'bad_version') return void res.end('{"latest":"<script>alert(1)</script>"}');
      res.end(JSON.stringify({ latest: this.latest, next: '1.0.0-rc.1' }));
    };
    if (this.held) this.held.push(answer);
    else answer();
  }
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function latest(t: TestApp): Promise<string> {
  const res = await api(t, 'GET', '/api/v1/version');
  assert.equal(res.status, 200, res.raw);
  return res.body.crucible.latest;
}

for (const kind of storeKinds()) {
  describe(`GET /version with an agent registry [${kind}]`, () => {
    const registry = new FakeRegistry();
    const t = {} as TestApp;
    before(async () => {
      const registryUrl = await registry.start();
      Object.assign(t, await startApp(kind, { config: { agentRegistryUrl: registryUrl, agentPackage: PACKAGE } }));
    });
    after(async () => {
      await t.close();
      await registry.stop();
    });
    // Each test starts with an expired cache and a healthy registry.
    const fresh = () => {
      t.clock.advance(2 * HOUR_MS);
      registry.mode = 'ok';
      registry.urls = [];
    };

    test('reads the latest dist-tag with the scoped name escaped as @scope%2fname', async () => {
      fresh();
      const res = await api(t, 'GET', '/api/v1/version');
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, {
        crucible: { latest: '0.12.3', min_supported: '0.1.0', changelog_url: 'http://localhost:80/docs#agent-versions' },
        dashboard: { version: SERVER_VERSION },
      });
      assert.deepEqual(registry.urls, ['/-/package/@kiln%2fagent/dist-tags']);
    });

    test('caches the answer for one hour of the injected clock', async () => {
      fresh();
      assert.equal(await latest(t), '0.12.3');
      registry.latest = '0.13.0';
      t.clock.advance(HOUR_MS - 1000);
      assert.equal(await latest(t), '0.12.3');
      assert.equal(await latest(t), '0.12.3');
      assert.equal(registry.hits, 1);
      t.clock.advance(1000);
      assert.equal(await latest(t), '0.13.0');
      assert.equal(registry.hits, 2);
    });

    test('concurrent requests during a lookup share one registry request', async () => {
      fresh();
      registry.hold();
      const pending = Array.from({ length: 5 }, () => latest(t));
      while (registry.hits === 0) await new Promise((resolve) => setImmediate(resolve));
      registry.release();
      assert.deepEqual(await Promise.all(pending), Array(5).fill(registry.latest));
      assert.equal(registry.hits, 1);
    });

    for (const mode of ['error', 'bad_json', 'no_tag', 'bad_version'] as const) {
      test(`a registry answer of kind ${mode} keeps the last good version, retried after 5 minutes`, async () => {
        fresh();
        assert.equal(await latest(t), registry.latest);
        registry.mode = mode;
        t.clock.advance(2 * HOUR_MS);
        const logsBefore = t.logs.length;
        assert.equal(await latest(t), registry.latest);
        assert.ok(t.logs.slice(logsBefore).some((line) => line.includes('agent registry lookup failed')));
        t.clock.advance(4 * MINUTE_MS);
        await latest(t);
        assert.equal(registry.hits, 2, 'a failure is cached, not retried at once');
        registry.mode = 'ok';
        registry.latest = '0.14.0';
        t.clock.advance(MINUTE_MS);
        assert.equal(await latest(t), '0.14.0');
        assert.equal(registry.hits, 3);
      });
    }
  });

  describe(`GET /version when the registry fails from the start [${kind}]`, () => {
    const registry = new FakeRegistry();
    let registryUrl = '';
    before(async () => {
      registryUrl = await registry.start();
    });
    after(() => registry.stop());

    for (const mode of ['error', 'bad_json'] as const) {
      test(`falls back to the bundled version on ${mode}`, async () => {
        registry.mode = mode;
        const t = await startApp(kind, { config: { agentRegistryUrl: registryUrl, agentPackage: 'kiln-agent' } });
        try {
          registry.urls = [];
          assert.equal(await latest(t), BUNDLED_AGENT_VERSION);
          assert.deepEqual(registry.urls, ['/-/package/kiln-agent/dist-tags']);
          assert.ok(t.logs.some((line) => line.includes('agent registry lookup failed') && line.includes('"level":40')));
        } finally {
          await t.close();
        }
      });
    }

    test('falls back to the bundled version when nothing listens on the port', async () => {
      const port = await closedPort();
      const t = await startApp(kind, { config: { agentRegistryUrl: `http://127.0.0.1:${port}`, agentPackage: PACKAGE } });
      try {
        assert.equal(await latest(t), BUNDLED_AGENT_VERSION);
        assert.ok(t.logs.some((line) => line.includes('agent registry lookup failed')));
      } finally {
        await t.close();
      }
    });
  });
}

describeEachStore('GET /version without a registry', (t) => {
  test('is public and reports the bundled agent version without any outbound request', async () => {
    const res = await api(t, 'GET', '/api/v1/version');
    assert.equal(res.status, 200);
    assert.equal(res.body.crucible.latest, BUNDLED_AGENT_VERSION);
    assert.equal(res.body.crucible.min_supported, '0.1.0');
    assert.equal(res.body.dashboard.version, SERVER_VERSION);
  });
}, { fetch: (async () => { throw new Error('no outbound request expected'); }) as typeof fetch });

describeEachStore('GET /version with configured URLs', (t) => {
  test('min_supported is MIN_AGENT_VERSION and changelog_url is AGENT_CHANGELOG_URL', async () => {
    const res = await api(t, 'GET', '/api/v1/version');
    assert.equal(res.body.crucible.min_supported, '0.5.0');
    assert.equal(res.body.crucible.changelog_url, 'https://example.com/agent/changelog');
  });
}, { config: { minAgentVersion: '0.5.0', agentChangelogUrl: 'https://example.com/agent/changelog' } });

describeEachStore('GET /version behind PUBLIC_URL', (t) => {
  test('the default changelog_url points at the docs of the public origin', async () => {
    const res = await api(t, 'GET', '/api/v1/version');
    assert.equal(res.body.crucible.changelog_url, 'https://kiln.example.com/docs#agent-versions');
  });
}, { config: { publicUrl: 'https://kiln.example.com' } });

describe('agent registry lookup', () => {
  test('distTagsUrl escapes scoped and plain names the way npm does', () => {
    assert.equal(distTagsUrl('https://packages.example/', '@kiln/agent'), 'https://packages.example/-/package/@kiln%2fagent/dist-tags');
    assert.equal(distTagsUrl('http://r.test', 'kiln-agent'), 'http://r.test/-/package/kiln-agent/dist-tags');
  });

  test('gives up on a registry that does not answer within the timeout', async () => {
    const registry = new FakeRegistry();
    registry.mode = 'hang';
    const url = await registry.start();
    try {
      const source = agentVersionSource({
        config: { agentRegistryUrl: url, agentPackage: PACKAGE, bundledAgentVersion: '9.9.9' },
        clock: new FakeClock(),
        fetch: globalThis.fetch,
        logger: pino({ level: 'silent' }),
        timeoutMs: 100,
      });
      assert.equal(await source.latest(), '9.9.9');
      assert.equal(registry.hits, 1, 'the registry was asked and never answered');
    } finally {
      await registry.stop();
    }
  });
});
