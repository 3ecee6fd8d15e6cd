import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { groupCommit } from '../../src/store/group-commit.js';
import { createTestStore, type TestStore } from '../helpers/stores.js';

// Group commit is the SQLite write path (one writer); PostgreSQL does not use it.
describe('group commit [sqlite]', () => {
  let t: TestStore;
  before(async () => {
    t = await createTestStore('sqlite');
  });
  after(async () => t.dispose());

  const insertAccount = (id: string) => async (tx: Parameters<Parameters<ReturnType<typeof groupCommit>['run']>[0]>[0]) => {
    await tx.insertInto('accounts').values({ id, created_at: '2026-11-22T00:00:00.000Z' }).execute();
    return id;
  };
  const ids = async () => (await t.store.db.selectFrom('accounts').select('id').orderBy('id').execute()).map((r) => r.id);

  test('work submitted together shares one transaction, in order, each getting its own result', async () => {
    const group = groupCommit(t.store.db);
    const seenInside: string[][] = [];
    const results = await Promise.all(['a1', 'a2', 'a3'].map((id) => group.run(async (tx) => {
      await insertAccount(id)(tx);
      seenInside.push((await tx.selectFrom('accounts').select('id').orderBy('id').execute()).map((r) => r.id));
      return id.toUpperCase();
    })));
    assert.deepEqual(results, ['A1', 'A2', 'A3']);
    // Later work of the group sees the earlier work's uncommitted rows: one transaction, in submission order.
    assert.deepEqual(seenInside, [['a1'], ['a1', 'a2'], ['a1', 'a2', 'a3']]);
    assert.deepEqual(await ids(), ['a1', 'a2', 'a3']);
  });

  test('a failing unit fails alone; the rest of its group is committed', async () => {
    const group = groupCommit(t.store.db);
    const outcomes = await Promise.allSettled([
      group.run(insertAccount('b1')),
      group.run(async (tx) => {
        await insertAccount('b2')(tx);
        throw new Error('this unit fails');
      }),
      group.run(insertAccount('b3')),
    ]);
    assert.deepEqual(outcomes.map((o) => o.status), ['fulfilled', 'rejected', 'fulfilled']);
    assert.equal((outcomes[1] as PromiseRejectedResult).reason.message, 'this unit fails');
    assert.deepEqual((await ids()).filter((id) => id.startsWith('b')), ['b1', 'b3']);
  });
});
