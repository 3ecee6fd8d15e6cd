import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DAY_MS } from '../src/lib/clock.js';
import { smtpMailer } from '../src/lib/mailer.js';
import { PASSWORD, api, expectEnvelope, startApp, uniqueEmail, type TestApp } from './helpers/app.js';
import { startSmtpServer, verificationTokenIn } from './helpers/smtp.js';
import { storeKinds } from './helpers/stores.js';

for (const kind of storeKinds()) {
  describe(`e-mail verification through SMTP [${kind}]`, () => {
    let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
    let t: TestApp;
    before(async () => {
      smtp = await startSmtpServer();
      t = await startApp(kind, { mailer: () => smtpMailer(smtp.url, 'Kiln <kiln@test.invalid>'), config: { publicUrl: 'https://kiln.example' } });
    });
    after(async () => {
      await t.close();
      await smtp.close();
    });

    async function registerAndReceive() {
      const email = uniqueEmail('verify');
      const reg = await api(t, 'POST', '/api/v1/auth/register', { body: { email, password: PASSWORD } });
      assert.equal(reg.status, 201);
      const mail = await smtp.next();
      assert.deepEqual(mail.to, [email]);
      return { email, token: reg.body.token as string, verification: verificationTokenIn(mail), mail };
    }

    test('registration sends a text and HTML e-mail with a link on PUBLIC_URL', async () => {
      const { mail } = await registerAndReceive();
      assert.match(mail.raw, /Subject: Confirm your e-mail address for Kiln/);
      assert.match(mail.raw, /Content-Type: text\/plain/);
      assert.match(mail.raw, /Content-Type: text\/html/);
      assert.match(mail.raw.replace(/=\r?\n/g, ''), /https:\/\/kiln\.example\/verify-email\?token=3D/);
    });

    test('the token verifies the account once', async () => {
      const { token, verification } = await registerAndReceive();
      const ok = await api(t, 'POST', '/api/v1/auth/verify', { body: { token: verification } });
      assert.equal(ok.status, 200);
      assert.equal(ok.body.success, true);
      assert.equal(ok.body.user.verified, true);
      assert.equal((await api(t, 'GET', '/api/v1/auth/me', { token })).body.verified, true);
      expectEnvelope(await api(t, 'POST', '/api/v1/auth/verify', { body: { token: verification } }), 400, 'invalid_verification_token');
    });

    test('the token expires after 24 hours', async () => {
      const { verification } = await registerAndReceive();
      t.clock.advance(DAY_MS);
      expectEnvelope(await api(t, 'POST', '/api/v1/auth/verify', { body: { token: verification } }), 400, 'invalid_verification_token');
      t.clock.advance(-DAY_MS);
    });

    test('unknown and malformed tokens', async () => {
      expectEnvelope(await api(t, 'POST', '/api/v1/auth/verify', { body: { token: 'nope' } }), 400, 'invalid_verification_token');
      expectEnvelope(await api(t, 'POST', '/api/v1/auth/verify', { body: {} }), 400, 'validation_failed');
      expectEnvelope(await api(t, 'POST', '/api/v1/auth/verify', { body: { token: 'x'.repeat(500) } }), 400, 'validation_failed');
    });
  });
}

for (const kind of storeKinds()) {
  describe(`registration when the mail server is down [${kind}]`, () => {
    let t: TestApp;
    before(async () => {
      // Port 9 (discard) on loopback: nothing listens, the connection is refused.
      t = await startApp(kind, { mailer: () => smtpMailer('smtp://127.0.0.1:9', 'Kiln <kiln@test.invalid>') });
    });
    after(async () => t.close());

    test('still creates the account and logs the failed delivery', async () => {
      const res = await api(t, 'POST', '/api/v1/auth/register', { body: { email: uniqueEmail(), password: PASSWORD } });
      assert.equal(res.status, 201);
      await t.close();
      t.close = async () => {};
      assert.ok(t.logs.some((line) => line.includes('verification e-mail not sent')), t.logs.join('\n'));
    });
  });
}
