import type { Expression, Kysely, Transaction } from 'kysely';
import { jsonArrayFrom as postgresJsonArray } from 'kysely/helpers/postgres';
import { jsonArrayFrom as sqliteJsonArray } from 'kysely/helpers/sqlite';
import type { Database } from '../../store/schema.js';
import type { ServerFacts } from './server-facts.js';
import type { Dialect } from '../../store/db.js';
import { groupCommit } from '../../store/group-commit.js';
import { reusable } from '../../store/reusable-query.js';
import { ACTIVE } from '../alerts/changes-repo.js';
import type { AlertRow } from '../alerts/records.js';
import { DEFAULT_INTERVAL_SECONDS, MISSED_INTERVALS_OFFLINE } from '../health/status.js';

export interface IngestClaim {
  keyHash: string;
  /** The receive time, ISO. */
  now: string;
  /** The newest last_ingest_at that still lets this push through (now − 55 s), ISO. */
  gateOpenAtOrBefore: string;
  facts: ServerFacts;
}

/** The claimed server with what the alert engine needs, read by the claim itself so a push costs no extra lookups. */
export interface ClaimedServer {
  id: string;
  account_id: string;
  name: string;
  hostname: string | null;
  /** JSON text. */
  tags: string;
  profile: string | null;
  /** JSON text. */
  config_overrides: string;
  /** What the rules kept from the previous snapshot (JSON text), null before the first. */
  rule_memory: string | null;
  /** The server's active alerts before this push. */
  active: AlertRow[];
  /** How many rules the server mutes. */
  muted_rules: number;
}

export interface KeyHolder {
  id: string;
  name: string;
  trashed_at: string | null;
  last_ingest_at: string | null;
}

/** Every column of an alert, named: SQLite's JSON aggregate needs explicit selections. */
const ALERT_COLUMNS = [
  'id', 'account_id', 'server_id', 'alert_type', 'subject', 'subject_key', 'kind', 'severity', 'status', 'title', 'message',
  'evidence', 'recommendation', 'occurrences', 'first_seen_at', 'last_seen_at', 'resolved_at', 'resolved_by', 'acknowledged', 'acknowledged_at',
] as const satisfies readonly (keyof AlertRow)[];

type AlertState = Pick<ClaimedServer, 'active' | 'muted_rules'>;

const CLAIM_VALUES = [
  'now', 'nowMs', 'keyHash', 'gateOpenAtOrBefore', 'ip', 'os_type', 'os_version', 'collector_version', 'dmi_vendor', 'dmi_product',
  'ipmi_sensors_count', 'disk_health_rollup', 'name', 'renamed', 'hostname',
] as const;

export function ingestRepo(db: Kysely<Database>, dialect: Dialect) {
  // SQLite has one writer: pushes share commits. PostgreSQL runs them in parallel on the pool.
  const group = dialect === 'sqlite' ? groupCommit(db) : null;
  const jsonArray = dialect === 'sqlite' ? sqliteJsonArray : postgresJsonArray;

  /** What the alert engine reconciles against: the server's active alerts (a JSON array) and how many rules it mutes. */
  const alertState = (serverId: Expression<string>) => [
    jsonArray(db.selectFrom('alerts').select(ALERT_COLUMNS).where('alerts.server_id', '=', serverId).where('alerts.status', '=', ACTIVE)).as('active'),
    db.selectFrom('server_mutes').select((s) => s.fn.countAll<number>().as('n')).where('server_mutes.server_id', '=', serverId).as('muted_rules'),
  ] as const;

  /**
   * Where the alert state is read. SQLite has one writer, so the claim's own
   * subqueries see every committed change: one statement. A PostgreSQL
   * statement reads as of its start, which can come before this row's lock
   * is granted: a mute, a manual resolve or a watchdog raise committed by
   * the lock's previous holder would be missed. There a second statement
   * reads the state once the lock is held.
   */
  const alertStateQuery = dialect === 'sqlite' ? null
    : reusable(['server_id'] as const, (v) => db.selectNoFrom((eb) => alertState(eb.val(v.server_id))));

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
      // The server_unreachable watchdog's deadline: 3 push intervals from now.
      // The cast keeps PostgreSQL from typing the parameter as the int4 of the other operand.
      unreachable_at_ms: eb(eb.cast<number>(eb.val(v.nowMs), 'bigint'), '+', eb(eb.lit(MISSED_INTERVALS_OFFLINE * 1000), '*',
        eb.fn.coalesce('push_interval_seconds', eb.lit(DEFAULT_INTERVAL_SECONDS)))),
    }))
    .where('collector_key_hash', '=', v.keyHash)
    .where('trashed_at', 'is', null)
    .where((eb) => eb.or([eb('last_ingest_at', 'is', null), eb('last_ingest_at', '<=', v.gateOpenAtOrBefore)]))
    .returning((eb) => [
      'id', 'account_id', 'name', 'hostname', 'tags', 'profile', 'config_overrides',
      eb.selectFrom('latest_snapshots').select('rule_memory').whereRef('latest_snapshots.server_id', '=', 'servers.id').as('rule_memory'),
      ...(alertStateQuery ? [] : alertState(eb.ref('servers.id'))),
    ]));

  const saveLatestQuery = reusable(['server_id', 'received_at', 'snapshot', 'metrics', 'rule_memory'] as const, (v) => db.insertInto('latest_snapshots')
    .values({ server_id: v.server_id, received_at: v.received_at, snapshot: v.snapshot, metrics: v.metrics, rule_memory: v.rule_memory })
    .onConflict((oc) => oc.column('server_id').doUpdateSet((eb) => ({
      received_at: eb.ref('excluded.received_at'),
      snapshot: eb.ref('excluded.snapshot'),
      metrics: eb.ref('excluded.metrics'),
      rule_memory: eb.ref('excluded.rule_memory'),
    }))));

  const saveSampleQuery = reusable(['server_id', 'ts', 'metrics'] as const, (v) => db.insertInto('metric_samples')
    .values({ server_id: v.server_id, ts: v.ts, metrics: v.metrics }));

  return {
    transaction<T>(work: (tx: Transaction<Database>) => Promise<T>): Promise<T> {
      return group ? group.run(work) : db.transaction().execute(work);
    },

    /** The server the push is for, with the gate passed and the row updated; undefined when the key is unknown or the gate closed. */
    async claim(tx: Transaction<Database>, claim: IngestClaim): Promise<ClaimedServer | undefined> {
      const { facts } = claim;
      const result = await tx.executeQuery(claimQuery({
        now: claim.now,
        nowMs: Date.parse(claim.now),
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
      const row = result.rows[0] as (Omit<ClaimedServer, 'active'> & { active: AlertRow[] | string }) | undefined;
      if (!row) return undefined;
      if (alertStateQuery) Object.assign(row, (await tx.executeQuery(alertStateQuery({ server_id: row.id }))).rows[0] as AlertState);
      // SQLite hands the JSON aggregate over as text; pg parses it already. COUNT(*) is never null.
      return { ...row, active: typeof row.active === 'string' ? JSON.parse(row.active) as AlertRow[] : row.active };
    },

    /**
     * Replaces the server's latest snapshot: the body as the agent sent it,
     * the metrics taken from it and what the alert rules keep of it.
     */
    async saveLatest(tx: Transaction<Database>, serverId: string, receivedAt: string, snapshot: string, metrics: string, ruleMemory: string | null): Promise<void> {
      await tx.executeQuery(saveLatestQuery({ server_id: serverId, received_at: receivedAt, snapshot, metrics, rule_memory: ruleMemory }));
    },

    /** Stores the snapshot's metric values (JSON text) as a raw history sample; the rollup job builds the 5m, 1h and 1d levels later. */
    async saveSample(tx: Transaction<Database>, serverId: string, receivedAt: string, metrics: string): Promise<void> {
      await tx.executeQuery(saveSampleQuery({ server_id: serverId, ts: receivedAt, metrics }));
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
