// The store's floor under ingest: the SQL of a steady-state push (claim,
// alerts' last_seen_at, latest snapshot, raw sample) run straight on
// better-sqlite3, prepared once, 32 pushes per transaction as group commit
// shares them, with no HTTP, validation, rules or Kysely. What a push costs
// at least on this store, whatever the code around it does.
//   node --import tsx bench/store-floor.ts   (FLOOR_SERVERS, default 10000;
//   FLOOR_AUTOCHECKPOINT=<pages> tries another WAL checkpoint interval)
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { inProcessIngest } from './in-process.js';

const SERVERS = Number(process.env.FLOOR_SERVERS ?? 10_000);
const GROUP = 32;
const PASSES = 3;

const ingest = await inProcessIngest({ count: SERVERS, concurrency: GROUP, logLevel: 'warn' });
await ingest.pass(); // every server has its latest snapshot, rule memory and the fixture's two active alerts
const metrics = JSON.stringify({ cpu_percent: 12.5, ram_percent: 41.2, swap_percent: 0, disk_max_percent: 22.1, net_rx_mbps: 0.4, net_tx_mbps: 0.2 });
await ingest.close();

const db = new SQLite(join(ingest.dataDir, 'kiln.sqlite'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
if (process.env.FLOOR_AUTOCHECKPOINT) db.pragma(`wal_autocheckpoint = ${process.env.FLOOR_AUTOCHECKPOINT}`);
const servers = db.prepare('select id, collector_key_hash as keyHash from servers').all() as { id: string; keyHash: string }[];
const alertIds = new Map<string, string[]>();
for (const row of db.prepare(`select server_id, id from alerts where status = 'active'`).all() as { server_id: string; id: string }[]) {
  alertIds.set(row.server_id, [...(alertIds.get(row.server_id) ?? []), row.id]);
}
const ruleMemory = (db.prepare('select rule_memory from latest_snapshots limit 1').get() as { rule_memory: string }).rule_memory;

const statements = {
  claim: db.prepare(`update servers set last_ingest_at = @now, last_seen_at = @now, ip = coalesce(@ip, ip), os_type = coalesce(@os, os_type),
      collector_version = coalesce(@version, collector_version), unreachable_at_ms = @deadline
    where collector_key_hash = @keyHash and trashed_at is null and (last_ingest_at is null or last_ingest_at <= @gate)
    returning id, account_id, name, hostname, tags, profile, config_overrides,
      (select rule_memory from latest_snapshots where server_id = servers.id) as rule_memory,
      (select coalesce(json_group_array(json_object('id', id, 'alert_type', alert_type, 'subject_key', subject_key, 'severity', severity,
        'title', title, 'message', message, 'evidence', evidence, 'occurrences', occurrences, 'first_seen_at', first_seen_at,
        'last_seen_at', last_seen_at)), '[]') from alerts where server_id = servers.id and status = 'active') as active,
      (select count(*) from server_mutes where server_id = servers.id) as muted`),
  alerts: db.prepare(`update alerts set last_seen_at = ? where id in (?, ?) and status = 'active'`),
  latest: db.prepare(`insert into latest_snapshots (server_id, received_at, snapshot, metrics, rule_memory) values (?, ?, ?, ?, ?)
    on conflict (server_id) do update set received_at = excluded.received_at, snapshot = excluded.snapshot,
      metrics = excluded.metrics, rule_memory = excluded.rule_memory`),
  sample: db.prepare('insert into metric_samples (server_id, ts, metrics) values (?, ?, ?)'),
};
const begin = db.prepare('begin');
const commit = db.prepare('commit');

type Part = keyof typeof statements | 'begin+commit';
const spent = new Map<Part, bigint>();
const timed = <T>(part: Part, work: () => T): T => {
  const started = process.hrtime.bigint();
  const result = work();
  spent.set(part, (spent.get(part) ?? 0n) + process.hrtime.bigint() - started);
  return result;
};

let pushes = 0;
const started = process.hrtime.bigint();
for (let pass = 1; pass <= PASSES; pass++) {
  const now = new Date(Date.now() + pass * 60_000 * 2).toISOString();
  const gate = new Date(Date.parse(now) - 55_000).toISOString();
  for (let i = 0; i < servers.length; i += GROUP) {
    timed('begin+commit', () => begin.run());
    for (const server of servers.slice(i, i + GROUP)) {
      const row = timed('claim', () => statements.claim.get({ now, ip: '10.0.0.1', os: 'linux', version: '1.4.0', deadline: Date.parse(now) + 900_000, keyHash: server.keyHash, gate }));
      if (!row) throw new Error('claim matched no row');
      const [a = '', b = ''] = alertIds.get(server.id) ?? [];
      timed('alerts', () => statements.alerts.run(now, a, b));
      timed('latest', () => statements.latest.run(server.id, now, ingest.body, metrics, ruleMemory));
      timed('sample', () => statements.sample.run(server.id, now, metrics));
      pushes += 1;
    }
    timed('begin+commit', () => commit.run());
  }
}
const total = Number(process.hrtime.bigint() - started) / 1000 / pushes;
console.log(`store floor: ${pushes} steady-state pushes over ${servers.length} servers, ${GROUP} per transaction: ${total.toFixed(1)} µs per push`);
for (const [part, ns] of spent) console.log(`  ${part.padEnd(13)} ${(Number(ns) / 1000 / pushes).toFixed(1)} µs`);
db.close();
