import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { STORE_RETRY_AFTER_SECONDS } from '../../src/store/errors.js';
import { PASSWORD, uniqueEmail } from '../helpers/app.js';
import { startServiceProcess } from '../helpers/service-process.js';
import { createTestStore, storeKinds, type TestStore } from '../helpers/stores.js';
import { postgresTarget, startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

type Service = ReturnType<typeof startServiceProcess>;

/** Resolves when the process has written a line matching `pattern` (a real event: its output). */
function printed(service: Service, pattern: RegExp): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (!pattern.test(service.output())) return;
      service.child.stdout!.off('data', check);
      resolve();
    };
    service.child.stdout!.on('data', check);
    check();
  });
}

/**
 * The service as users run it (src/main.ts: pool, scheduler, signal
 * handling), its PostgreSQL behind the test's proxy: the idle connections a
 * restart kills do not take the process down, and it serves again once the
 * database is back, without a restart.
 */
describe('the service process through a PostgreSQL outage [postgres]', { skip: !storeKinds().includes('postgres') && 'TEST_DATABASE_URL is not set' }, () => {
  let proxy: TcpProxy;
  let database: TestStore;
  let dataDir: string;
  let service: Service;
  let origin: string;
  before(async () => {
    database = await createTestStore('postgres');
    proxy = await startTcpProxy(postgresTarget());
    dataDir = mkdtempSync(join(tmpdir(), 'kiln-faults-'));
    service = startServiceProcess(dataDir, { DATABASE_URL: proxy.via(database.location) });
    origin = await service.listening;
  });
  after(async () => {
    if (service.child.exitCode === null) {
      service.child.kill('SIGTERM');
      await service.exited;
    }
    await proxy.close();
    await database.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const register = (email: string) => fetch(`${origin}/api/v1/auth/register`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: PASSWORD }),
  });

  test('idle connections lost, 503 unavailable meanwhile with /healthz up; back: ready and writing, same process', async () => {
    assert.equal((await fetch(`${origin}/readyz`)).status, 200);
    const lost = printed(service, /idle PostgreSQL connection was lost/);
    await proxy.cut();
    await lost; // the pool's idle connection ended, reported at warn, and the process lives on

    const ready = await fetch(`${origin}/readyz`);
    assert.equal(ready.status, 503);
    assert.equal(ready.headers.get('retry-after'), String(STORE_RETRY_AFTER_SECONDS));
    assert.equal((await ready.json()).error, 'unavailable');
    assert.equal((await fetch(`${origin}/healthz`)).status, 200);
    const email = uniqueEmail('process');
    const refused = await register(email);
    assert.equal(refused.status, 503);
    assert.deepEqual(await refused.json().then((b) => [b.error, b.retryable]), ['unavailable', true]);

    await proxy.restore();
    assert.equal((await fetch(`${origin}/readyz`)).status, 200);
    assert.equal((await register(email)).status, 201, 'the refused registration left nothing behind: the same e-mail registers');
    assert.equal(service.child.exitCode, null, 'never restarted');
    assert.doesNotMatch(service.output(), /"level":(50|60)/, 'nothing logged as an error');

    service.child.kill('SIGTERM');
    assert.equal(await service.exited, 0, 'and it still shuts down cleanly');
  });
});
