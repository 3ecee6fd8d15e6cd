import type { CompiledQuery, Compilable, Kysely, Transaction } from 'kysely';
import type { Database } from '../../store/schema.js';
import type { ServerFacts } from './server-facts.js';
import type { Dialect } from '../../store/db.js';
import { groupCommit } from '../../store/group-commit.js';

export interface IngestClaim {
  keyHash: string;
  /** The receive time, ISO. */
  now: string;
  /** The newest last_ingest_at that still lets this push through (now − 55 s), ISO. */
  gateOpenAtOrBefore: string;
  facts: ServerFacts;
}

export interface ClaimedServer {
  id: string;
  account_id: string;
  name: string;
}

export interface KeyHolder {
  id: string;
  name: string;
  trashed_at: string | null;
  last_ingest_at: string | null;
}

/**
 * Builds a query once and replays its SQL with new values. Building and
 * compiling a Kysely query costs more than SQLite takes to run these
 * statements, and ingest runs them for every snapshot. The query is built
 * with a marker per named value; each execution puts the real values at the
 * markers' positions, whatever order the dialect's SQL has them in.
 */
function reusable<K extends string, R>(names: readonly K[], build: (values: Record<K, never>) => Compilable<R>) {
  const marker = (name: string) => `\u0000kiln:${name}`;
  const compiled = build(Object.fromEntries(names.map((n) => [n, marker(n)])) as Record<K, never>).compile();
  const slots = compiled.parameters.map((p) => names.find((n) => p === marker(n)) ?? null);
  return (values: Record<K, unknown>): CompiledQuery<R> => ({
    ...compiled,
    parameters: compiled.parameters.map((p, i) => (slots[i] === null ? p : values[slots[i]!])),
  });
}

const CLAIM_VALUES = [
  'now', 'keyHash', 'gateOpenAtOrBefore', 'ip', 'os_type', 'os_version', 'collector_version', 'dmi_vendor', 'dmi_product',
  'ipmi_sensors_count', 'disk_health_rollup', 'name', 'renamed', 'hostname',
] as const;

export function ingestRepo(db: Kysely<Database>, dialect: Dialect) {
  // SQLite has one writer: pushes share commits. PostgreSQL runs them in parallel on the pool.
  const group = dialect === 'sqlite' ? groupCommit(db) : null;

  /**
   * The hot path's one statement: authenticates the key (unique index on
   * collector_key_hash, live servers only), applies the 55-second gate and
   * writes what the snapshot reports, atomically. On PostgreSQL a concurrent
   * push for the same server waits for this row's lock and then re-checks the
   * WHERE against the committed row, so across processes too only one of them
   * matches. A fact the snapshot does not report is null and keeps the stored
   * value (COALESCE), so the statement has one shape for every snapshot.
   */
  const claimQuery = reusable(CLAIM_VALUES, (v) => db.updateTable('servers')
    .set((eb) => ({
      last_ingest_at: v.now,
      last_seen_at: v.now,
      ip: eb.fn.coalesce(eb.val(v.ip), 'ip'),
      os_type: eb.fn.coalesce(eb.val(v.os_type), 'os_type'),
      os_version: eb.fn.coalesce(eb.val(v.os_version), 'os_version'),
      collector_version: eb.fn.coalesce(eb.val(v.collector_version), 'collector_version'),
      dmi_vendor: eb.fn.coalesce(eb.val(v.dmi_vendor), 'dmi_vendor'),
      dmi_product: eb.fn.coalesce(eb.val(v.dmi_product), 'dmi_product'),
      ipmi_sensors_count: eb.fn.coalesce(eb.val(v.ipmi_sensors_count), 'ipmi_sensors_count'),
      disk_health_rollup: eb.fn.coalesce(eb.val(v.disk_health_rollup), 'disk_health_rollup'),
      // The reported hostname replaces a placeholder name, never a name the user chose.
      name: eb.case().when('name_is_placeholder', '=', eb.lit(1)).then(eb.fn.coalesce(eb.val(v.name), 'name')).else(eb.ref('name')).end(),
      name_is_placeholder: eb.case().when(eb.val<number>(v.renamed), '=', eb.lit(1)).then(eb.lit(0)).else(eb.ref('name_is_placeholder')).end(),
      // Filled once; a hostname never changes after that.
      hostname: eb.fn.coalesce('hostname', eb.val(v.hostname)),
    }))
    .where('collector_key_hash', '=', v.keyHash)
    .where('trashed_at', 'is', null)
    .where((eb) => eb.or([eb('last_ingest_at', 'is', null), eb('last_ingest_at', '<=', v.gateOpenAtOrBefore)]))
    .returning(['id', 'account_id', 'name']));

  const saveLatestQuery = reusable(['server_id', 'received_at', 'snapshot', 'metrics'] as const, (v) => db.insertInto('latest_snapshots')
    .values({ server_id: v.server_id, received_at: v.received_at, snapshot: v.snapshot, metrics: v.metrics })
    .onConflict((oc) => oc.column('server_id').doUpdateSet((eb) => ({
      received_at: eb.ref('excluded.received_at'),
      snapshot: eb.ref('excluded.snapshot'),
      metrics: eb.ref('excluded.metrics'),
    }))));

  return {
    transaction<T>(work: (tx: Transaction<Database>) => Promise<T>): Promise<T> {
      return group ? group.run(work) : db.transaction().execute(work);
    },

    /** The server the push is for, with the gate passed and the row updated; undefined when the key is unknown or the gate closed. */
    async claim(tx: Transaction<Database>, claim: IngestClaim): Promise<ClaimedServer | undefined> {
      const { facts } = claim;
      const result = await tx.executeQuery(claimQuery({
        now: claim.now,
        keyHash: claim.keyHash,
        gateOpenAtOrBefore: claim.gateOpenAtOrBefore,
        ip: facts.ip ?? null,
        os_type: facts.os_type ?? null,
        os_version: facts.os_version ?? null,
        collector_version: facts.collector_version ?? null,
        dmi_vendor: facts.dmi_vendor ?? null,
        dmi_product: facts.dmi_product ?? null,
        ipmi_sensors_count: facts.ipmi_sensors_count ?? null,
        disk_health_rollup: facts.disk_health_rollup ?? null,
        name: facts.name ?? null,
        renamed: facts.name === undefined ? 0 : 1,
        hostname: facts.hostname ?? null,
      }));
      return result.rows[0];
    },

    /** Replaces the server's latest snapshot: the body as the agent sent it and the metrics taken from it. */
    async saveLatest(tx: Transaction<Database>, serverId: string, receivedAt: string, snapshot: string, metrics: string): Promise<void> {
      await tx.executeQuery(saveLatestQuery({ server_id: serverId, received_at: receivedAt, snapshot, metrics }));
    },

    /** The server a key belongs to, trashed or not; undefined for an unknown, rotated-out or purged key. */
    findByKeyHash(keyHash: string): Promise<KeyHolder | undefined> {
      return db.selectFrom('servers')
        .select(['id', 'name', 'trashed_at', 'last_ingest_at'])
        .where('collector_key_hash', '=', keyHash)
        .executeTakeFirst();
    },
  };
}

export type IngestRepo = ReturnType<typeof ingestRepo>;
