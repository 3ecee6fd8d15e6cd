import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openStore, type Dialect, type Store, type StoreOptions } from '../../src/store/db.js';
import { migrateToLatest } from '../../src/store/migrate.js';

/**
 * The stores every store-touching test runs on: SQLite always, PostgreSQL
 * when TEST_DATABASE_URL is set. TEST_STORES=postgres (or sqlite) narrows it.
 */
export function storeKinds(): Dialect[] {
  const kinds: Dialect[] = ['sqlite'];
  if (process.env.TEST_DATABASE_URL) kinds.push('postgres');
  const only = process.env.TEST_STORES?.split(',').map((s) => s.trim());
  if (only?.length) {
    const narrowed = kinds.filter((k) => only.includes(k));
    if (only.includes('postgres') && !process.env.TEST_DATABASE_URL) {
      throw new Error('TEST_STORES asks for postgres but TEST_DATABASE_URL is not set');
    }
    return narrowed;
  }
  return kinds;
}

async function adminQuery(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** Fault tests close the store themselves; disposal must still remove the files or the schema. */
async function closeOnce(store: Store): Promise<void> {
  try {
    await store.close();
  } catch (err) {
    if (!/more than once|closed/i.test(String(err))) throw err;
  }
}

export interface TestStore {
  store: Store;
  /** SQLite: the directory of its file (kiln.sqlite); PostgreSQL: the database's own URL, direct. */
  location: string;
  dispose(): Promise<void>;
}

/** How the fault tests open the store: the store's own options, and for PostgreSQL a proxy in between. */
export interface TestStoreOptions extends Pick<StoreOptions, 'sqliteBusyTimeoutMs' | 'connectTimeoutMs'> {
  /** Rewrites the URL the store connects by (PostgreSQL). */
  via?: (url: string) => string;
}

/** A migrated, empty store of its own: a temporary SQLite file, or a fresh PostgreSQL database. */
export async function createTestStore(kind: Dialect, options: TestStoreOptions = {}): Promise<TestStore> {
  const { via, ...storeOptions } = options;
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'kiln-test-'));
    const store = openStore({ databaseUrl: null, dataDir: dir, ...storeOptions });
    await migrateToLatest(store);
    return {
      store,
      location: dir,
      async dispose() {
        await closeOnce(store);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  // A database of its own, not a schema: Kysely's migrator introspects every
  // schema of its database, which races with other test files dropping theirs.
  const adminUrl = process.env.TEST_DATABASE_URL!;
  const name = `kiln_test_${randomBytes(6).toString('hex')}`;
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  await adminQuery(adminUrl, `create database ${name}`);
  const store = openStore({ databaseUrl: via ? via(url.toString()) : url.toString(), dataDir: '', poolSize: 4, ...storeOptions });
  await migrateToLatest(store);
  return {
    store,
    location: url.toString(),
    async dispose() {
      await closeOnce(store);
      await adminQuery(adminUrl, `drop database ${name} with (force)`);
    },
  };
}
