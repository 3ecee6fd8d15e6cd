import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PASSWORD, api, createKey, expectEnvelope, registerUser, startApp, uniqueEmail, type ApiResponse, type TestApp } from './helpers/app.js';
import { BACKENDS, backendLimiters, type BackendLimiters } from './helpers/limiters.js';
import { storeKinds } from './helpers/stores.js';

const kind = storeKinds()[0]!;
const WRONG = 'not the password at all';

/** Each attempt from another address: the lockout is per e-mail, not per client. */
const login = (t: TestApp, email: string, password: string) => api(t, 'POST', '/api/v1/auth/login', { body: { email, password } });

async function failTimes(t: TestApp, email: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) expectEnvelope(await login(t, email, WRONG), 401, 'invalid_credentials');
}

function expectLockedOut(res: ApiResponse, seconds = 90): any {
  const envelope = expectEnvelope(res, 429, 'rate_limited');
  assert.equal(envelope.retry_after_seconds, seconds);
  assert.equal(res.headers['retry-after'], String(seconds));
  return envelope;
}

for (const backend of BACKENDS) {
  describe(`failed password attempts, 10 per 15 minutes per e-mail [${backend.name}]`, { skip: backend.skip }, () => {
    let limiters: BackendLimiters;
    let t: TestApp;
    before(async () => {
      limiters = backendLimiters(backend.name);
      t = await startApp(kind, { limiter: limiters.make() });
    });
    after(async () => {
      await t.close();
      await limiters.dispose();
    });

    test('after 10 failures the e-mail gets 429, even with the right password, until a token is back', async () => {
      const user = await registerUser(t);
      await failTimes(t, user.email, 10);
      expectLockedOut(await login(t, user.email, PASSWORD));
      // The address is compared normalized: case and surrounding spaces do not make a new budget.
      expectLockedOut(await login(t, `  ${user.email.toUpperCase()} `, PASSWORD));
      t.clock.advance(89_000);
      expectLockedOut(await login(t, user.email, PASSWORD), 1);
      t.clock.advance(1_000);
      assert.equal((await login(t, user.email, PASSWORD)).status, 200);
    });

    test('an unknown e-mail gets exactly the same answers, so the lockout tells nothing', async () => {
      const known = await registerUser(t);
      const unknown = uniqueEmail('nobody');
      await failTimes(t, known.email, 10);
      await failTimes(t, unknown, 10);
      const a = expectLockedOut(await login(t, known.email, WRONG));
      const b = expectLockedOut(await login(t, unknown, WRONG));
      assert.equal(a.message, b.message);
      assert.deepEqual(Object.keys(a), Object.keys(b));
    });

    test('other e-mails are unaffected, and a success neither resets its own count nor anyone else\'s', async () => {
      const user = await registerUser(t);
      const neighbour = await registerUser(t);
      await failTimes(t, neighbour.email, 5);
      await failTimes(t, user.email, 9);
      assert.equal((await login(t, user.email, PASSWORD)).status, 200, 'the right password still works with a token left');
      assert.equal((await login(t, neighbour.email, PASSWORD)).status, 200);
      await failTimes(t, user.email, 1);
      expectLockedOut(await login(t, user.email, WRONG), 90);
      await failTimes(t, neighbour.email, 5);
      expectLockedOut(await login(t, neighbour.email, WRONG));
    });

    test('a burst of concurrent guesses gets at most 10 checks', async () => {
      const user = await registerUser(t);
      const results = await Promise.all(Array.from({ length: 25 }, () => login(t, user.email, WRONG)));
      assert.equal(results.filter((r) => r.status === 401).length, 10);
      assert.equal(results.filter((r) => r.status === 429).length, 15);
    });

    test('re-authentication draws on the same budget as login', async () => {
      const user = await registerUser(t);
      const { secret } = await createKey(t, user.token, ['write'], ['servers:purge']);
      const verify = (password: string) => api(t, 'POST', '/api/v1/account/verify-password', { token: secret, body: { password } });
      for (let i = 0; i < 6; i++) expectEnvelope(await verify(WRONG), 401, 'invalid_credentials');
      await failTimes(t, user.email, 4);
      expectLockedOut(await verify(PASSWORD));
      expectLockedOut(await login(t, user.email, PASSWORD));
      t.clock.advance(90_000);
      assert.equal((await verify(PASSWORD)).status, 200);
      // The success gave its token back, and nothing more: one failure left.
      expectEnvelope(await verify(WRONG), 401, 'invalid_credentials');
      expectLockedOut(await verify(WRONG));
    });
  });
}
