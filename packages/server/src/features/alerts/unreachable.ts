import { iso } from '../../lib/clock.js';
import { DEFAULT_INTERVAL_SECONDS, MISSED_INTERVALS_OFFLINE } from '../health/status.js';
import type { NewAlertFields } from './records.js';

export const UNREACHABLE = 'server_unreachable';

export interface SilentServer {
  name: string;
  last_seen_at: string | null;
  created_at: string;
  push_interval_seconds: number | null;
}

const minutes = (seconds: number) => `${Math.round(seconds / 60)} min`;

const RECOMMENDATION = 'Check that the host is up (ping, the provider console or IPMI) and that the agent runs: `systemctl status` of its unit and `journalctl -u <unit> -n 50`. '
  + 'Check that the host reaches this service over HTTPS (DNS, proxy, egress firewall). After a key rotation the agent logs 401 until its configuration has the new collector key.';

/** The server_unreachable alert the watchdog raises for a server that has gone silent (or never reported). */
export function unreachableAlert(server: SilentServer, now: Date): NewAlertFields {
  const at = iso(now);
  const base = { alert_type: UNREACHABLE, subject: null, kind: 'state' as const, severity: 'critical' as const, occurrences: 1, first_seen_at: at, last_seen_at: at, recommendation: RECOMMENDATION };
  if (server.last_seen_at === null) {
    const waited = (now.getTime() - Date.parse(server.created_at)) / 1000;
    return {
      ...base,
      title: `${server.name} has never reported`,
      message: `No snapshot since the server was registered ${minutes(waited)} ago (at ${server.created_at}). Is the agent installed and configured with its collector key?`,
      evidence: JSON.stringify({ never_reported: true, registered_at: server.created_at, seconds_since_registration: Math.round(waited) }),
    };
  }
  const interval = server.push_interval_seconds ?? DEFAULT_INTERVAL_SECONDS;
  const silent = (now.getTime() - Date.parse(server.last_seen_at)) / 1000;
  return {
    ...base,
    title: `${server.name} stopped reporting`,
    message: `No snapshot for ${minutes(silent)} (since ${server.last_seen_at}): ${MISSED_INTERVALS_OFFLINE} push intervals of ${interval} s have passed.`,
    evidence: JSON.stringify({ last_seen_at: server.last_seen_at, seconds_since_last_snapshot: Math.round(silent), interval_seconds: interval, missed_intervals: MISSED_INTERVALS_OFFLINE }),
  };
}
