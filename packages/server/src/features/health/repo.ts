import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Dialect } from '../../store/db.js';
import type { Database } from '../../store/schema.js';
import type { RollupResolution } from './rollups.js';

export interface HealthServerRow {
  id: string;
  last_seen_at: string | null;
  config_overrides: string;
  received_at: string | null;
  metrics: string | null;
}

/** A row with the JSON text of each requested series (null when the row lacks it), in the order asked. */
export interface PickedRow {
  t: string;
  series: Array<string | null>;
}

/**
 * Reads for the health endpoints; every server lookup is scoped by account
 * and skips trashed servers. History reads walk the primary key
 * (server_id[, resolution], ts/bucket) as a range, oldest first.
 */
export function healthRepo(db: Kysely<Database>, dialect: Dialect) {
  /**
   * One key of a JSON text column, as JSON text. Pulling only the wanted
   * series in SQL avoids parsing every mount and interface of a large host
   * in JS (8 ms → 1 ms for 720 hourly rows of a 24-disk host on SQLite).
   * The two dialects spell it differently; the result is the same text.
   * Keys are the fixed series names of history.ts, plain identifiers.
   */
  const jsonKey = (column: 'stats' | 'metrics', key: string): RawBuilder<string | null> => dialect === 'postgres'
    ? sql<string | null>`(${sql.ref(column)}::jsonb -> ${key})::text`
    : sql<string | null>`(${sql.ref(column)} -> ${`$.${key}`})`;

  const picked = (rows: Array<Record<string, string | null>>, time: string, count: number): PickedRow[] =>
    rows.map((row) => ({ t: row[time]!, series: Array.from({ length: count }, (_, i) => row[`s${i}`] ?? null) }));

  return {
    /** The server with its latest snapshot's metrics (null columns before the first snapshot). */
    findServer(accountId: string, serverId: string): Promise<HealthServerRow | undefined> {
      return db.selectFrom('servers')
        .leftJoin('latest_snapshots', 'latest_snapshots.server_id', 'servers.id')
        .select(['servers.id', 'servers.last_seen_at', 'servers.config_overrides', 'latest_snapshots.received_at', 'latest_snapshots.metrics'])
        .where('servers.account_id', '=', accountId)
        .where('servers.id', '=', serverId)
        .where('servers.trashed_at', 'is', null)
        .executeTakeFirst();
    },

    async serverExists(accountId: string, serverId: string): Promise<boolean> {
      const row = await db.selectFrom('servers').select('id')
        .where('account_id', '=', accountId).where('id', '=', serverId).where('trashed_at', 'is', null)
        .executeTakeFirst();
      return row !== undefined;
    },

    /** Raw samples with from <= ts < to, whole. */
    samples(serverId: string, from: string, to: string): Promise<Array<{ ts: string; metrics: string }>> {
      return db.selectFrom('metric_samples').select(['ts', 'metrics'])
        .where('server_id', '=', serverId).where('ts', '>=', from).where('ts', '<', to)
        .orderBy('ts')
        .execute();
    },

    /** Raw samples with from <= ts < to, only the named series. */
    async sampleSeries(serverId: string, from: string, to: string, names: readonly string[]): Promise<PickedRow[]> {
      const rows = await db.selectFrom('metric_samples')
        .select(['ts', ...names.map((name, i) => jsonKey('metrics', name).as(`s${i}`))])
        .where('server_id', '=', serverId).where('ts', '>=', from).where('ts', '<', to)
        .orderBy('ts')
        .execute();
      return picked(rows as Array<Record<string, string | null>>, 'ts', names.length);
    },

    /** Rollup buckets starting in [from, to), whole stats. */
    rollups(serverId: string, resolution: RollupResolution, from: string, to: string): Promise<Array<{ bucket: string; stats: string }>> {
      return db.selectFrom('metric_rollups').select(['bucket', 'stats'])
        .where('server_id', '=', serverId).where('resolution', '=', resolution)
        .where('bucket', '>=', from).where('bucket', '<', to)
        .orderBy('bucket')
        .execute();
    },

    /** Rollup buckets starting in [from, to), only the named series. */
    async rollupSeries(serverId: string, resolution: RollupResolution, from: string, to: string, names: readonly string[]): Promise<PickedRow[]> {
      const rows = await db.selectFrom('metric_rollups')
        .select(['bucket', ...names.map((name, i) => jsonKey('stats', name).as(`s${i}`))])
        .where('server_id', '=', serverId).where('resolution', '=', resolution)
        .where('bucket', '>=', from).where('bucket', '<', to)
        .orderBy('bucket')
        .execute();
      return picked(rows as Array<Record<string, string | null>>, 'bucket', names.length);
    },
  };
}

export type HealthRepo = ReturnType<typeof healthRepo>;
