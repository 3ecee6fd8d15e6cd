import { NAME_MAX_CHARS, charCount, isHostname } from '../servers/rules.js';
import { diskHealthRollup, type DiskHealth } from './disk-health.js';
import type { SnapshotBody } from './snapshot-schema.js';

/**
 * What one snapshot tells about its server row. A field is present only when
 * the snapshot reports a usable value for it: a block or field that is
 * absent or null leaves the stored value as it was, so the row shows the
 * last known value rather than flickering to null when a probe fails once.
 */
export interface ServerFacts {
  ip?: string;
  os_type?: string;
  os_version?: string;
  collector_version?: string;
  dmi_vendor?: string;
  dmi_product?: string;
  ipmi_sensors_count?: number;
  disk_health_rollup?: DiskHealth;
  /** The name a placeholder name becomes: the reported hostname, when it is a valid server name. */
  name?: string;
  /** The hostname a server without one gets: the reported hostname when it is RFC 1035, lowercased. */
  hostname?: string;
}

// Control characters break logs and terminals; a lone surrogate would be stored as U+FFFD, not as reported.
const CONTROL = /[\p{Cc}\p{Cs}]/u;
const OS_ID = /^[a-z0-9._-]{1,64}$/;
const VERSION = /\d+(?:\.\d+)*/;

/** Trimmed, non-empty text without control characters or lone surrogates; else nothing. */
function text(value: unknown): string | undefined {
  if (typeof value !== 'string' || CONTROL.test(value)) return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

/**
 * `os_type` is the distribution id (`system.os_id`, the ID of os-release:
 * `debian`, `ubuntu`, `rhel`), lowercased. `os_version` is `system.os_version`
 * when an agent sends one, else the first version number in the pretty name
 * `system.os` ("Debian GNU/Linux 12 (bookworm)" → "12", "Ubuntu 22.04.3 LTS"
 * → "22.04.3"); a name without a number (Arch, Debian sid) leaves it unchanged.
 */
export function osFacts(system: SnapshotBody['system']): Pick<ServerFacts, 'os_type' | 'os_version'> {
  const facts: Pick<ServerFacts, 'os_type' | 'os_version'> = {};
  const id = text(system.os_id)?.toLowerCase();
  if (id !== undefined && OS_ID.test(id)) facts.os_type = id;
  const version = text(system.os_version) ?? text(system.os)?.match(VERSION)?.[0];
  if (version !== undefined) facts.os_version = version;
  return facts;
}

/** The reported hostname as a server name (1-100 characters) and as an RFC 1035 hostname. */
export function hostnameFacts(reported: unknown): Pick<ServerFacts, 'name' | 'hostname'> {
  const facts: Pick<ServerFacts, 'name' | 'hostname'> = {};
  const value = text(reported);
  if (value === undefined) return facts;
  if (charCount(value) <= NAME_MAX_CHARS) facts.name = value;
  // A fully qualified name may end with the root's dot; the stored form has none.
  const host = value.endsWith('.') ? value.slice(0, -1) : value;
  if (isHostname(host)) facts.hostname = host.toLowerCase();
  return facts;
}

export function serverFacts(snapshot: SnapshotBody): ServerFacts {
  const facts: ServerFacts = { ...osFacts(snapshot.system), ...hostnameFacts(snapshot.system.hostname) };
  const set = <K extends keyof ServerFacts>(key: K, value: ServerFacts[K] | undefined) => {
    if (value !== undefined) facts[key] = value;
  };
  set('ip', text(snapshot.system.ip));
  set('collector_version', text(snapshot.collector_version));
  if (snapshot.dmi) {
    set('dmi_vendor', text(snapshot.dmi.vendor));
    set('dmi_product', text(snapshot.dmi.product_name));
  }
  if (snapshot.ipmi && Array.isArray(snapshot.ipmi.sensors)) set('ipmi_sensors_count', snapshot.ipmi.sensors.length);
  if (Array.isArray(snapshot.smart)) set('disk_health_rollup', diskHealthRollup(snapshot.smart));
  return facts;
}
