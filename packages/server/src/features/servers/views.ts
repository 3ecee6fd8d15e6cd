import type { HardwareSummary } from './hardware.js';
import type { ServerRow } from './repo.js';
import type { Profile } from './rules.js';

/** The list item: what GET /servers shows of each server; `activeAlerts` is its count of active alerts. */
export function serverListItem(row: ServerRow, activeAlerts: number) {
  return {
    id: row.id,
    name: row.name,
    hostname: row.hostname,
    ip: row.ip,
    os_type: row.os_type,
    os_version: row.os_version,
    status: row.status as 'active' | 'suspended',
    suspended_at: row.suspended_at,
    suspended_reason: row.suspended_reason,
    last_seen_at: row.last_seen_at,
    collector_version: row.collector_version,
    active_alerts: activeAlerts,
    disk_health_rollup: row.disk_health_rollup as 'healthy' | 'declining' | 'failing' | 'broken',
    created_at: row.created_at,
    tags: JSON.parse(row.tags) as string[],
    dmi_vendor: row.dmi_vendor,
    dmi_product: row.dmi_product,
    ipmi_sensors_count: row.ipmi_sensors_count,
    profile: row.profile as Profile | null,
  };
}

/** The full server of GET /servers/:id: the list item plus its read-only settings and the hardware its agent reports. */
export function serverView(row: ServerRow, hardware: HardwareSummary | null, activeAlerts: number) {
  return {
    ...serverListItem(row, activeAlerts),
    config_overrides: JSON.parse(row.config_overrides) as Record<string, unknown>,
    free_analysis_used: row.free_analysis_used === 1,
    hardware,
  };
}

export function trashedServerView(row: ServerRow, activeAlerts: number) {
  return { ...serverListItem(row, activeAlerts), trashed_at: row.trashed_at! };
}
