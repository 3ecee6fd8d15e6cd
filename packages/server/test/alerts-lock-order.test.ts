import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { describeEachStore } from './helpers/app.js';
import { activeKeys } from './helpers/alerts.js';
import { fixture, push, reporter } from './helpers/ingest.js';
import { INGEST_GATE_MS } from '../src/features/ingest/service.js';

/** Resolves once some session of this database waits for a row lock; polls the server's own view of it. */
async function someoneWaitsForALock(t: { store: { db: any } }): Promise<void> {
  for (let attempt = 0; attempt < 1000; attempt++) {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'`.execute(t.store.db);
    if (rows[0]!.n > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('the push never waited for the server row');
}

const ACTIVE_PAIR = ['no_firewall - warning', 'unattended_upgrades_disabled - warning'];

describeEachStore('a push waiting for its server row', (t) => {
  test('reconciles against what the lock holder committed, not what was there when it started', async (ctx) => {
    if (t.kind !== 'postgres') {
      ctx.skip('needs PostgreSQL: SQLite has one writer, so a push never waits inside a statement for another');
      return;
    }
    const r = await reporter(t);
    const snapshot = fixture('snapshot-vm-debian12.json');
    assert.equal((await push(t, r.key, snapshot)).status, 200);
    assert.deepEqual(await activeKeys(t, r), ACTIVE_PAIR);
    t.clock.advance(INGEST_GATE_MS);

    // Another request holds the server row (as a manual resolve does) and resolves no_firewall.
    const holder = await t.store.db.startTransaction().execute();
    await holder.selectFrom('servers').select('id').where('id', '=', r.server.id).forNoKeyUpdate().execute();
    await holder.updateTable('alerts').set({ status: 'resolved', resolved_by: 'manual', resolved_at: t.clock.now().toISOString() })
      .where('server_id', '=', r.server.id).where('alert_type', '=', 'no_firewall').execute();
    const pending = push(t, r.key, snapshot);
    await someoneWaitsForALock(t);
    await holder.commit().execute();

    // The firewall is still off: the resolved alert comes back as a new one, counted as such.
    const res = await pending;
    assert.equal(res.status, 200, res.raw);
    assert.deepEqual([res.body.new_alerts, res.body.active_alerts], [1, 2]);
    assert.deepEqual(await activeKeys(t, r), ACTIVE_PAIR);
  });
});
