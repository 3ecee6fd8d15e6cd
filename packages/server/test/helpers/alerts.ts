import assert from 'node:assert/strict';
import { api, type TestApp } from './app.js';
import { push, type Reporter } from './ingest.js';

/** Every alert of a server through the API, newest first (status=all). */
export async function alertsOf(t: TestApp, r: Reporter, query = ''): Promise<any[]> {
  const res = await api(t, 'GET', `/api/v1/servers/${r.server.id}/alerts?per_page=100${query}`, { token: r.user.token });
  assert.equal(res.status, 200, res.raw);
  return res.body.alerts;
}

/** Active alerts of a server as sorted `type subject severity` lines. */
export async function activeKeys(t: TestApp, r: Reporter): Promise<string[]> {
  return (await alertsOf(t, r, '&status=active')).map((a) => `${a.alert_type} ${a.subject ?? '-'} ${a.severity}`).sort();
}

/**
 * The outbox rows of a server in commit order, as `event alert_type` lines.
 * Rows of one transaction share their created_at; their order among
 * themselves follows the rules' order, so they are sorted alphabetically.
 */
export async function outboxEvents(t: TestApp, serverId: string): Promise<string[]> {
  const rows = await t.store.db.selectFrom('notification_outbox').select(['id', 'event', 'payload', 'created_at'])
    .where('server_id', '=', serverId).orderBy('id').execute();
  const lines = rows.map((row, i) => ({ i, at: row.created_at, line: `${row.event} ${JSON.parse(row.payload).alert.alert_type}` }));
  lines.sort((a, b) => (a.at === b.at ? a.line.localeCompare(b.line) : a.i - b.i));
  return lines.map((l) => l.line);
}

export interface HostState {
  uptime: number;
  disks?: Array<{ mount: string; percent_used: number }>;
  oomKills?: number;
  firewall?: boolean;
  autoUpdates?: boolean;
  expectedReboot?: boolean;
}

/** A snapshot of a plain Linux host in the given state; nothing else in it raises an alert. */
export function hostSnapshot(t: TestApp, state: HostState): Record<string, unknown> {
  return {
    timestamp: t.clock.now().toISOString(),
    collector_version: '0.10.1',
    system: { hostname: 'seq-host', os: 'Debian GNU/Linux 12 (bookworm)', os_id: 'debian', uptime_seconds: state.uptime },
    cpu: { idle_percent: 97, iowait_percent: 0, load_1m: 0.2, cores: [{ core: 0 }, { core: 1 }] },
    memory: { total_mb: 8000, used_mb: 2000, available_mb: 6000, swap_total_mb: 0, swap_used_mb: 0 },
    disks: (state.disks ?? [{ mount: '/', percent_used: 40 }]).map((d) => ({ device: `/dev/sd-${d.mount.length}`, fstype: 'ext4', ...d })),
    os_alerts: { oom_kills_recent: state.oomKills ?? 0, zombie_processes: 0, time_drift_ms: 0 },
    security: {
      firewall: { active: state.firewall ?? true, source: 'nftables' },
      auto_updates: { configured: state.autoUpdates ?? true, mechanism: 'unattended-upgrades' },
    },
    ...(state.expectedReboot !== undefined && { expected_reboot: state.expectedReboot }),
  };
}

/** Pushes and expects 200; returns [new_alerts, active_alerts]. */
export async function pushOk(t: TestApp, r: Reporter, body: unknown): Promise<[number, number]> {
  const res = await push(t, r.key, body);
  assert.equal(res.status, 200, res.raw);
  return [res.body.new_alerts, res.body.active_alerts];
}
