import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { openStore, type Dialect, type Store } from '../../src/store/db.js';

/**
 * Columns left out of a store snapshot because a request that changes
 * nothing may still write them:
 * - account_keys.last_used_at: authenticating with an account key records
 *   its use (at most once a minute), whatever the request then does. The
 *   hostile suites call the purge endpoint with an account key.
 * Rate-limit buckets and failed-password counts live in the limiter (memory
 * or Redis), not in the store.
 */
export const VOLATILE_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  account_keys: ['last_used_at'],
};

export type Row = Record<string, unknown>;
/** Every row of every table, by table name; rows in a deterministic order. */
export type StoreRows = Record<string, Row[]>;

async function tableNames(store: Store): Promise<string[]> {
  const query = store.dialect === 'sqlite'
    ? sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`
    : sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'`;
  return (await query.execute(store.db)).rows.map((r) => r.name).sort();
}

/** One value as both stores give it: PostgreSQL may return numbers as strings or Dates; SQLite never does. */
function normalise(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'bigint') return Number(value);
  if (Buffer.isBuffer(value)) return value.toString('base64');
  return value;
}

/**
 * Reads the whole store: every table the store has (found by asking it, so a
 * table added later is covered too), every row, every column except the
 * volatile ones, rows sorted by their JSON text.
 */
export async function storeRows(store: Store): Promise<StoreRows> {
  const rows: StoreRows = {};
  for (const table of await tableNames(store)) {
    const skip = VOLATILE_COLUMNS[table] ?? [];
    const result = await sql<Row>`select * from ${sql.table(table)}`.execute(store.db);
    rows[table] = result.rows
      .map((row) => Object.fromEntries(Object.keys(row).sort().filter((k) => !skip.includes(k)).map((k) => [k, normalise(row[k])])))
      .sort((a, b) => {
        const [x, y] = [JSON.stringify(a), JSON.stringify(b)];
        return x < y ? -1 : x > y ? 1 : 0;
      });
  }
  return rows;
}

/**
 * The same, read through a connection of its own to the store at `location`
 * (a TestStore's), past whatever the service's connection is going through
 * (a cut proxy, a busy lock): fault tests compare before and after with it.
 */
export async function storeRowsAt(kind: Dialect, location: string): Promise<StoreRows> {
  const store = openStore(kind === 'sqlite' ? { databaseUrl: null, dataDir: location } : { databaseUrl: location, dataDir: '' });
  try {
    return await storeRows(store);
  } finally {
    await store.close();
  }
}

/** The tables whose rows differ between two snapshots, with their row counts, for a readable failure. */
export function changedTables(before: StoreRows, after: StoreRows): string[] {
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return names.filter((name) => JSON.stringify(before[name]) !== JSON.stringify(after[name]))
    .map((name) => `${name}: ${before[name]?.length ?? 0} → ${after[name]?.length ?? 0} rows`);
}

export interface RowChange {
  table: string;
  kind: 'added' | 'removed';
  row: Row;
}

/** Rows present in one snapshot and not in the other (a changed row shows as one removed and one added). */
export function rowChanges(before: StoreRows, after: StoreRows): RowChange[] {
  const changes: RowChange[] = [];
  for (const table of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const was = new Set((before[table] ?? []).map((r) => JSON.stringify(r)));
    const now = new Set((after[table] ?? []).map((r) => JSON.stringify(r)));
    for (const text of was) if (!now.has(text)) changes.push({ table, kind: 'removed', row: JSON.parse(text) });
    for (const text of now) if (!was.has(text)) changes.push({ table, kind: 'added', row: JSON.parse(text) });
  }
  return changes;
}

function describe(changes: RowChange[]): string {
  return changes.slice(0, 10).map((c) => `${c.kind} ${c.table}: ${JSON.stringify(c.row).slice(0, 300)}`).join('\n');
}

/** Fails, naming the rows, when the store differs from `before`. */
export async function assertStoreUnchanged(store: Store, before: StoreRows, what: string): Promise<void> {
  const changes = rowChanges(before, await storeRows(store));
  if (changes.length > 0) assert.fail(`${what} changed the store:\n${describe(changes)}`);
}

/** Fails when a change touches a row that `mine` does not claim (the resource the request created or updated). */
export function assertOnlyRowsOf(changes: RowChange[], mine: (change: RowChange) => boolean, what: string): void {
  const foreign = changes.filter((c) => !mine(c));
  if (foreign.length > 0) assert.fail(`${what} changed rows beyond its own:\n${describe(foreign)}`);
}
