import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import type { Dialect } from '../../src/store/db.js';

/** Every row of every table, each table's rows as sorted JSON lines. */
export type StoreState = Record<string, string[]>;

/**
 * Reads the whole store through a connection of its own, past whatever the
 * service's connection is going through (a cut proxy, a busy lock), so a
 * test can compare the state before and after a fault row by row.
 */
export async function storeState(kind: Dialect, location: string): Promise<StoreState> {
  const state: StoreState = {};
  if (kind === 'sqlite') {
    const db = new SQLite(join(location, 'kiln.sqlite'), { readonly: true });
    try {
      const tables = db.prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name").all() as Array<{ name: string }>;
      for (const { name } of tables) {
        state[name] = (db.prepare(`select * from "${name}"`).all() as unknown[]).map((row) => JSON.stringify(row)).sort();
      }
    } finally {
      db.close();
    }
    return state;
  }
  const client = new pg.Client({ connectionString: location });
  await client.connect();
  try {
    const tables = await client.query<{ name: string }>(
      "select table_name as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name");
    for (const { name } of tables.rows) {
      state[name] = (await client.query(`select * from "${name}"`)).rows.map((row) => JSON.stringify(row)).sort();
    }
  } finally {
    await client.end();
  }
  return state;
}

/** Row counts of the tables that differ between two states, for a readable failure. */
export function changedTables(before: StoreState, after: StoreState): string[] {
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return names.filter((name) => JSON.stringify(before[name]) !== JSON.stringify(after[name]))
    .map((name) => `${name}: ${before[name]?.length ?? 0} → ${after[name]?.length ?? 0} rows`);
}
