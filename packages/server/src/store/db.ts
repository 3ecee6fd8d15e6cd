import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql, type SqliteDatabase } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
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
  /** SQLite: how long a write waits for another connection's lock before SQLITE_BUSY (default 5000). */
  sqliteBusyTimeoutMs?: number;
  /** PostgreSQL: how long getting a connection may take, from the pool or a new one (default 5000). */
  connectTimeoutMs?: number;
  /** Where a pooled PostgreSQL connection lost while idle is reported (warn). */
  logger?: Pick<Logger, 'warn'>;
}

export const DEFAULT_SQLITE_BUSY_TIMEOUT_MS = 5_000;
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;

// COUNT(*) and other int8 values arrive as strings by default; every count here fits a double.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export function openStore(options: StoreOptions): Store {
  return options.databaseUrl ? openPostgres(options.databaseUrl, options) : openSqlite(options);
}

const NO_OP_STATEMENT = { reader: false, run: () => ({ changes: 0, lastInsertRowid: 0 }) } as unknown as SQLite.Statement;

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
      // SQLite may already have rolled the transaction back itself (it may on
      // SQLITE_BUSY, SQLITE_FULL, SQLITE_IOERR); Kysely's ROLLBACK would then
      // fail with "no transaction is active" and replace the error that says
      // what happened. With nothing to undo, the rollback is a no-op.
      if (text === 'rollback' && !database.inTransaction) return NO_OP_STATEMENT;
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
  // A write meeting another connection's lock retries for this long, then fails with SQLITE_BUSY (503 unavailable).
  const busyTimeout = options.sqliteBusyTimeoutMs ?? DEFAULT_SQLITE_BUSY_TIMEOUT_MS;
  if (!Number.isSafeInteger(busyTimeout) || busyTimeout < 0) throw new Error(`sqliteBusyTimeoutMs must be a whole number >= 0, got ${busyTimeout}`);
  database.pragma(`busy_timeout = ${busyTimeout}`);
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
    connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
  });
  // An idle client that loses its connection (a restart, pg_terminate_backend)
  // must not crash the process: the pool drops it and connects anew when asked.
  pool.on('error', (err) => options.logger?.warn({ err }, 'store: an idle PostgreSQL connection was lost; the pool replaces it'));
  // A client in use emits 'error' as well when its connection is lost, and
  // the pool listens only while the client is idle: unheard, that error
  // would crash the process mid-request. Its query fails by itself (503
  // `unavailable`), and the pool discards the client when it is released.
  pool.on('connect', (client) => client.on('error', () => {}));
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
