/**
 * Host profiles: a kind of host on which some alert types are expected and
 * not actionable. Setting a profile on a server silences those types (not
 * raised, not notified; the alerts feature resolves their active alerts).
 */
export interface HostProfile {
  id: string;
  label: string;
  silenced_alert_types: readonly string[];
}

export const HOST_PROFILES = [
  {
    id: 'marketplace_gpu',
    label: 'Marketplace GPU host',
    // Rented-out GPU hosts: the marketplace filters traffic and controls updates and power limits.
    silenced_alert_types: ['no_firewall', 'unattended_upgrades_disabled', 'gpu_power_cap_throttling'] as readonly string[],
  },
] as const satisfies readonly HostProfile[];

export type HostProfileId = (typeof HOST_PROFILES)[number]['id'];

const NONE: ReadonlySet<string> = new Set();
const SILENCED = new Map<string, ReadonlySet<string>>(HOST_PROFILES.map((p) => [p.id, new Set<string>(p.silenced_alert_types)]));

/** The alert types a server with this profile does not raise; none for no profile or an unknown one. */
export function silencedTypes(profile: string | null): ReadonlySet<string> {
  return (profile !== null && SILENCED.get(profile)) || NONE;
}

/** The profiles that silence an alert type (`silenced_by_profiles` of GET /alert-rules). */
export function profilesSilencing(alertType: string): string[] {
  return HOST_PROFILES.filter((p) => p.silenced_alert_types.includes(alertType)).map((p) => p.id);
}
