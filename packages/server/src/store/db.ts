import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql, type SqliteDatabase } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Store {
  db: Kysely<Database>;
  dialect: Dialect;
  /** Resolves when the store answers a trivial query. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface StoreOptions {
  /** `postgres://…`; when null the embedded SQLite store is used. */
  databaseUrl: string | null;
  /** Directory of the SQLite file (ignored for PostgreSQL). */
  dataDir: string;
  /** SQLite file name inside dataDir. */
  sqliteFile?: string;
  poolSize?: number;
}

// COUNT(*) and other int8 values arrive as strings by default; every count here fits a double.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export function openStore(options: StoreOptions): Store {
  return options.databaseUrl ? openPostgres(options.databaseUrl, options) : openSqlite(options);
}

/** How many distinct SQL texts keep their prepared statement. */
const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely's SQLite driver prepares every query anew; preparing costs about as
 * much as running a small statement. This reuses statements by SQL text, least
 * recently used first out. Safe because Kysely runs one query at a time on
 * the connection and consumes each result fully.
 */
function withStatementCache(database: SQLite.Database): SqliteDatabase {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => database.close(),
    prepare(text: string) {
      let statement = cache.get(text);
      if (statement) {
        cache.delete(text);
      } else {
        statement = database.prepare(text);
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
      }
      cache.set(text, statement);
      return statement;
    },
  };
}

function openSqlite(options: StoreOptions): Store {
  mkdirSync(options.dataDir, { recursive: true });
  const file = join(options.dataDir, options.sqliteFile ?? 'kiln.sqlite');
  const database = new SQLite(file);
  database.pragma('journal_mode = WAL');
  database.pragma('busy_timeout = 5000');
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(database) }) });
  return {
    db,
    dialect: 'sqlite',
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  };
}

function openPostgres(url: string, options: StoreOptions): Store {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: 5_000,
  });
  // An idle client that loses its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    dialect: 'postgres',
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  };
}
