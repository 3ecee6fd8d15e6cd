import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import type { TestApp } from './helpers/app.js';
import { api, createKey, describeEachStore, expectEnvelope, registerUser } from './helpers/app.js';

async function accountIdOf(t: TestApp, userId: string): Promise<string> {
  const row = await t.store.db.selectFrom('users').select('account_id').where('id', '=', userId).executeTakeFirstOrThrow();
  return row.account_id;
}

/** Imported historical state: the only way a legacy subscription row comes to exist. */
async function insertLegacy(t: TestApp, accountId: string, overrides: Record<string, unknown> = {}): Promise<void> {
  await t.store.db.insertInto('legacy_subscriptions').values({
    account_id: accountId,
    plan: 'pro',
    has_default_payment_method: 1,
    current_period_end: '2026-12-31T00:00:00.000Z',
    cancel_at_period_end: 0,
    billing_enforcement_exempt: 1,
    free_server_quota: 3,
    ...overrides,
  }).execute();
}

async function insertServer(
  t: TestApp,
  accountId: string,
  fields: { status?: string; suspended_reason?: string | null; trashed_at?: string | null } = {},
): Promise<void> {
  const id = `srv_${randomBytes(10).toString('hex')}`;
  await t.store.db.insertInto('servers').values({
    id, account_id: accountId, name: id, name_is_placeholder: 0, hostname: null, tags: '[]', profile: null,
    ip: null, os_type: null, os_version: null, status: fields.status ?? 'active',
    suspended_at: fields.status === 'suspended' ? '2025-01-01T00:00:00.000Z' : null,
    suspended_reason: fields.suspended_reason ?? null, last_seen_at: null, collector_version: null,
    disk_health_rollup: 'healthy', dmi_vendor: null, dmi_product: null, ipmi_sensors_count: null,
    config_overrides: '{}', free_analysis_used: 0, collector_key_hash: randomBytes(32).toString('hex'), key_rotated_at: null,
    created_at: t.clock.now().toISOString(), trashed_at: fields.trashed_at ?? null,
  }).execute();
}

const RECORD_FIELDS = [
  'active_server_count', 'billing_enforcement_exempt', 'cancel_at_period_end', 'current_period_end',
  'free_server_quota', 'has_default_payment_method', 'plan', 'suspended_no_card_count',
];

describeEachStore('GET /billing/status', (t) => {
  test('an account without a legacy subscription gets the free record', async () => {
    const u = await registerUser(t);
    const res = await api(t, 'GET', '/api/v1/billing/status', { token: u.token });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      plan: 'free',
      has_default_payment_method: false,
      current_period_end: null,
      cancel_at_period_end: false,
      billing_enforcement_exempt: false,
      active_server_count: 0,
      suspended_no_card_count: 0,
      free_server_quota: 0,
    });
  });

  test('a legacy subscription supplies plan, flags and period; the counts stay live', async () => {
    const u = await registerUser(t);
    const accountId = await accountIdOf(t, u.user.id);
    await insertLegacy(t, accountId);
    const res = await api(t, 'GET', '/api/v1/billing/status', { token: u.token });
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), RECORD_FIELDS);
    assert.equal(res.body.plan, 'pro');
    assert.equal(res.body.has_default_payment_method, true);
    assert.equal(res.body.current_period_end, '2026-12-31T00:00:00.000Z');
    assert.equal(res.body.cancel_at_period_end, false);
    assert.equal(res.body.billing_enforcement_exempt, true);
    assert.equal(res.body.free_server_quota, 3);
    assert.equal(res.body.active_server_count, 0);
  });

  test('counts active and no-card-suspended servers, never trashed ones or other accounts', async () => {
    const u = await registerUser(t);
    const other = await registerUser(t);
    const accountId = await accountIdOf(t, u.user.id);
    await insertServer(t, accountId);
    await insertServer(t, accountId);
    await insertServer(t, accountId, { trashed_at: '2026-11-01T00:00:00.000Z' });
    await insertServer(t, accountId, { status: 'suspended', suspended_reason: 'no_card_on_file' });
    await insertServer(t, accountId, { status: 'suspended', suspended_reason: 'no_card_on_file', trashed_at: '2026-11-01T00:00:00.000Z' });
    await insertServer(t, accountId, { status: 'suspended', suspended_reason: 'other' });
    await insertServer(t, await accountIdOf(t, other.user.id));
    const res = await api(t, 'GET', '/api/v1/billing/status', { token: u.token });
    assert.equal(res.body.active_server_count, 2);
    assert.equal(res.body.suspended_no_card_count, 1);
    assert.equal((await api(t, 'GET', '/api/v1/billing/status', { token: other.token })).body.active_server_count, 1);
  });

  test('a read-only account key may read it; no credential is 401', async () => {
    const u = await registerUser(t);
    const key = await createKey(t, u.token, ['read']);
    assert.equal((await api(t, 'GET', '/api/v1/billing/status', { token: key.secret })).status, 200);
    expectEnvelope(await api(t, 'GET', '/api/v1/billing/status'), 401, 'unauthorized');
  });
});

describeEachStore('POST /billing/checkout', (t) => {
  test('is retired: 410 gone, with or without a legacy subscription', async () => {
    const u = await registerUser(t);
    const env = expectEnvelope(await api(t, 'POST', '/api/v1/billing/checkout', { token: u.token }), 410, 'gone');
    assert.match(env.message, /charges nothing/);
    assert.equal(env.retryable, false);
    await insertLegacy(t, await accountIdOf(t, u.user.id));
    expectEnvelope(await api(t, 'POST', '/api/v1/billing/checkout', { token: u.token, body: { plan: 'pro' } }), 410, 'gone');
  });

  test('needs a credential with the write scope', async () => {
    const u = await registerUser(t);
    const key = await createKey(t, u.token, ['read']);
    expectEnvelope(await api(t, 'POST', '/api/v1/billing/checkout'), 401, 'unauthorized');
    expectEnvelope(await api(t, 'POST', '/api/v1/billing/checkout', { token: key.secret }), 403, 'insufficient_scope');
  });
});

describeEachStore('POST /billing/portal, /billing/resume, /billing/downgrade', (t) => {
  test('without a legacy subscription each is 409 no_legacy_subscription', async () => {
    const u = await registerUser(t);
    for (const action of ['portal', 'resume', 'downgrade']) {
      expectEnvelope(await api(t, 'POST', `/api/v1/billing/${action}`, { token: u.token }), 409, 'no_legacy_subscription');
    }
  });

  test('downgrade schedules the end of the legacy plan; resume undoes it; both are idempotent', async () => {
    const u = await registerUser(t);
    await insertLegacy(t, await accountIdOf(t, u.user.id));
    for (let i = 0; i < 2; i += 1) {
      const down = await api(t, 'POST', '/api/v1/billing/downgrade', { token: u.token });
      assert.equal(down.status, 200);
      assert.equal(down.body.success, true);
      assert.deepEqual(Object.keys(down.body.billing).sort(), RECORD_FIELDS);
      assert.equal(down.body.billing.cancel_at_period_end, true);
      assert.equal(down.body.billing.plan, 'pro');
    }
    assert.equal((await api(t, 'GET', '/api/v1/billing/status', { token: u.token })).body.cancel_at_period_end, true);
    for (let i = 0; i < 2; i += 1) {
      const resume = await api(t, 'POST', '/api/v1/billing/resume', { token: u.token });
      assert.equal(resume.status, 200);
      assert.deepEqual(resume.body.billing.cancel_at_period_end, false);
    }
    assert.equal((await api(t, 'GET', '/api/v1/billing/status', { token: u.token })).body.cancel_at_period_end, false);
  });

  test('portal answers without a URL: there is no payment provider any more', async () => {
    const u = await registerUser(t);
    await insertLegacy(t, await accountIdOf(t, u.user.id));
    const res = await api(t, 'POST', '/api/v1/billing/portal', { token: u.token });
    assert.equal(res.status, 200);
    assert.equal(res.body.success, true);
    assert.equal(res.body.url, null);
    assert.match(res.body.message, /retired/);
  });

  test('one account cannot act on another account\'s legacy subscription', async () => {
    const owner = await registerUser(t);
    const stranger = await registerUser(t);
    await insertLegacy(t, await accountIdOf(t, owner.user.id));
    expectEnvelope(await api(t, 'POST', '/api/v1/billing/downgrade', { token: stranger.token }), 409, 'no_legacy_subscription');
    assert.equal((await api(t, 'GET', '/api/v1/billing/status', { token: owner.token })).body.cancel_at_period_end, false);
  });

  test('a read-only key gets 403 insufficient_scope', async () => {
    const u = await registerUser(t);
    await insertLegacy(t, await accountIdOf(t, u.user.id));
    const key = await createKey(t, u.token, ['read']);
    for (const action of ['portal', 'resume', 'downgrade']) {
      expectEnvelope(await api(t, 'POST', `/api/v1/billing/${action}`, { token: key.secret }), 403, 'insufficient_scope');
    }
  });
});
