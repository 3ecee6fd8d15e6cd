import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { startServiceProcess } from './helpers/service-process.js';
import { fileURLToPath } from 'node:url';

const serverDir = fileURLToPath(new URL('..', import.meta.url));
const startMain = (dataDir: string) => startServiceProcess(dataDir);

describe('the service process', () => {
  test('starts on the embedded store, migrates, serves, and stops cleanly on SIGTERM', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'kiln-main-'));
    try {
      const main = startMain(dataDir);
      const origin = await main.listening;
      assert.equal((await fetch(`${origin}/readyz`)).status, 200);
      const reg = await fetch(`${origin}/api/v1/auth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'owner@example.com', password: 'a long enough password' }),
      });
      assert.equal(reg.status, 201);
      assert.ok(existsSync(join(dataDir, 'kiln.sqlite')));
      assert.ok(readFileSync(join(dataDir, 'secret.key'), 'utf8').trim().length >= 32);

      main.child.kill('SIGTERM');
      assert.equal(await main.exited, 0, main.output());
      assert.match(main.output(), /"msg":"stopped"/);

      // The secret key and the data survive a restart: the account is still there.
      const again = startMain(dataDir);
      const origin2 = await again.listening;
      const login = await fetch(`${origin2}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'owner@example.com', password: 'a long enough password' }),
      });
      assert.equal(login.status, 200);
      again.child.kill('SIGINT');
      assert.equal(await again.exited, 0, again.output());
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('refuses to start with an invalid setting and says which', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'kiln-main-'));
    try {
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
        cwd: serverDir, env: { ...process.env, PORT: 'eighty', DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      assert.equal(code, 2);
      assert.match(stderr, /PORT must be 0-65535/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
