import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DAY_MS } from '../../src/lib/clock.js';
import { idempotencyCleanupJob } from '../../src/jobs/idempotency-cleanup.js';
import { api, describeEachStore, registerUser } from '../helpers/app.js';

describeEachStore('idempotency cleanup job', (t) => {
  test('deletes keys older than 24 hours and keeps the rest', async () => {
    const u = await registerUser(t);
    const post = (key: string) => api(t, 'POST', '/api/v1/servers', { token: u.token, body: { name: key }, headers: { 'idempotency-key': key } });
    assert.equal((await post('old-key')).status, 201);
    t.clock.advance(DAY_MS / 2);
    assert.equal((await post('new-key')).status, 201);
    t.clock.advance(DAY_MS / 2);

    await idempotencyCleanupJob(t.store.db).run(t.clock.now());

    const keys = await t.store.db.selectFrom('idempotency_keys').select('idem_key').execute();
    assert.deepEqual(keys.map((k) => k.idem_key), ['new-key']);
    const replay = await post('new-key');
    assert.equal(replay.headers['idempotency-replayed'], 'true');
  });
});
