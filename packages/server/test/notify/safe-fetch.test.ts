import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { judgeAddress } from '../../src/lib/address-policy.js';
import { MAX_RESPONSE_BYTES, OutboundError, outboundClient } from '../../src/lib/safe-fetch.js';
import { Receiver } from '../helpers/receiver.js';

const receiver = new Receiver();
before(() => receiver.start());
after(() => receiver.stop());

const open = outboundClient({ allowPrivateTargets: true, timeoutMs: 2000, userAgent: 'kiln-test' });
const strict = outboundClient({ allowPrivateTargets: false, timeoutMs: 2000, userAgent: 'kiln-test' });

async function refusedWith(promise: Promise<unknown>): Promise<OutboundError> {
  const err = await promise.then(() => null, (e: unknown) => e);
  assert.ok(err instanceof OutboundError, `expected an OutboundError, got ${String(err)}`);
  return err;
}

describe('address policy', () => {
  test('loopback, private, CGNAT and unique-local addresses are private, also in IPv4-mapped IPv6 form', () => {
    for (const address of ['127.0.0.1', '127.255.0.9', '::1', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.1.1', '100.64.0.1',
      '100.127.255.254', 'fc00::1', 'fd12:3456::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '::ffff:192.168.0.1']) {
      assert.equal(judgeAddress(address), 'private', address);
    }
  });

  test('link-local (cloud metadata), unspecified and multicast are never allowed', () => {
    for (const address of ['169.254.169.254', '169.254.0.1', '0.0.0.0', '0.1.2.3', '::', 'fe80::1', 'febf::1', '224.0.0.1', 'ff02::1',
      '255.255.255.255', '::ffff:169.254.169.254', '::ffff:a9fe:a9fe', '::ffff:0.0.0.0']) {
      assert.equal(judgeAddress(address), 'forbidden', address);
    }
  });

  test('public addresses are allowed, including the neighbours of private ranges', () => {
    for (const address of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '172.15.255.255', '100.128.0.1', '100.63.255.255', '11.0.0.1',
      '2606:4700:4700::1111', '2001:db8::1', 'fec0::1']) {
      assert.equal(judgeAddress(address), 'allowed', address);
    }
  });
});

describe('outbound POST', () => {
  test('sends the body with content-type, content-length and user-agent; answers status and body', async () => {
    receiver.reset({ status: 202, body: '{"status":"success"}' });
    const res = await open.post({ url: `${receiver.origin}/in?x=1`, headers: { 'x-extra': 'yes' }, body: '{"a":1}' });
    assert.equal(res.status, 202);
    assert.equal(res.body, '{"status":"success"}');
    const request = receiver.last();
    assert.equal(request.method, 'POST');
    assert.equal(request.url, '/in?x=1');
    assert.equal(request.body, '{"a":1}');
    assert.equal(request.headers['content-type'], 'application/json');
    assert.equal(request.headers['content-length'], '7');
    assert.equal(request.headers['user-agent'], 'kiln-test');
    assert.equal(request.headers['x-extra'], 'yes');
  });

  test(`reads at most ${MAX_RESPONSE_BYTES} bytes of an answer`, async () => {
    receiver.reset({ status: 500, body: 'y'.repeat(5 * MAX_RESPONSE_BYTES) });
    const res = await open.post({ url: `${receiver.origin}/big`, headers: {}, body: '{}' });
    assert.equal(res.status, 500);
    assert.equal(res.body.length, MAX_RESPONSE_BYTES);
  });

  test('a redirect is answered, not followed', async () => {
    receiver.reset({ status: 307, headers: { location: `${receiver.origin}/elsewhere` } });
    const res = await open.post({ url: `${receiver.origin}/start`, headers: {}, body: '{}' });
    assert.equal(res.status, 307);
    assert.deepEqual(receiver.requests.map((r) => r.url), ['/start']);
  });

  test('private targets are refused without the setting, by literal, by name, by mapped or decimal form; nothing is sent', async () => {
    receiver.reset();
    const port = new URL(receiver.origin).port;
    for (const host of ['127.0.0.1', 'localhost', '[::ffff:127.0.0.1]', '2130706433', '0x7f.1']) {
      const err = await refusedWith(strict.post({ url: `http://${host}:${port}/x`, headers: {}, body: '{}' }));
      assert.equal(err.failure, 'blocked', host);
      assert.equal(err.retryable, false);
    }
    assert.equal(receiver.requests.length, 0);
  });

  test('a name is resolved and connected through its judged addresses', async () => {
    receiver.reset();
    const res = await open.post({ url: `http://localhost:${new URL(receiver.origin).port}/by-name`, headers: {}, body: '{}' });
    assert.equal(res.status, 200);
    assert.equal(receiver.last().url, '/by-name');
    assert.equal(receiver.last().headers.host, `localhost:${new URL(receiver.origin).port}`);
  });

  test('an operator-configured (trusted) endpoint is not address-checked', async () => {
    receiver.reset();
    const res = await strict.post({ url: `${receiver.origin}/operator`, headers: {}, body: '{}', trusted: true });
    assert.equal(res.status, 200);
  });

  test('link-local stays refused with private targets allowed', async () => {
    const err = await refusedWith(open.post({ url: 'http://169.254.169.254/latest/meta-data/', headers: {}, body: '{}' }));
    assert.equal(err.failure, 'blocked');
  });

  test('DNS failure and a non-http scheme are reported as such', async () => {
    const dns = await refusedWith(open.post({ url: 'https://nothing.example.invalid/x', headers: {}, body: '{}' }));
    assert.equal(dns.failure, 'dns');
    assert.equal(dns.retryable, true);
    const scheme = await refusedWith(open.post({ url: 'file:///etc/passwd', headers: {}, body: '{}' }));
    assert.equal(scheme.failure, 'invalid_url');
  });

  test('a receiver that never answers times out within the deadline', async () => {
    receiver.reset('hang');
    const quick = outboundClient({ allowPrivateTargets: true, timeoutMs: 200, userAgent: 'kiln-test' });
    const err = await refusedWith(quick.post({ url: `${receiver.origin}/hang`, headers: {}, body: '{}' }));
    receiver.reset();
    assert.equal(err.failure, 'timeout');
    assert.equal(err.retryable, true);
    assert.match(err.message, /within 200 ms/);
  });
});
