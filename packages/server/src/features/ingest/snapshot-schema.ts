import { Type, type Static, type TArray, type TOptional, type TProperties, type TSchema, type TUnsafe } from '@sinclair/typebox';

/**
 * The ingest payload. Lenient but typed: every known field is checked for
 * its JSON type, `null` is accepted wherever an agent may not know a value,
 * and unknown fields pass through untouched (no `additionalProperties`
 * anywhere, so newer agents can extend the payload). Only `timestamp` and
 * `system` are required. Lengths and item counts are capped so that a
 * hostile body cannot make later processing (rules, metrics, the row
 * update) expensive; the caps sit far above what real hosts report.
 *
 * Nullable values are written as JSON Schema type arrays
 * (`type: ["number", "null"]`) rather than `anyOf`, so a wrong type yields
 * one error at the field's own JSON pointer.
 */

/** Strings that end up in the server row or its name. */
const SHORT = 255;
/** Names, identifiers, states, units. */
const NAME = 1024;
/** Free text the agent copies from tools (details, mount options, messages). */
const TEXT = 16_384;

type Nullable<T extends TSchema> = TUnsafe<Static<T> | null>;

/** `schema` or null; `schema` must carry a single `type`. */
function orNull<T extends TSchema>(schema: T): Nullable<T> {
  return Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type as string, 'null'] });
}

const num = () => orNull(Type.Number());
const bool = () => orNull(Type.Boolean());
const str = (maxLength = NAME) => orNull(Type.String({ maxLength }));
/** An optional, nullable object block; its fields are all optional. */
const block = <P extends TProperties>(properties: P, description?: string) =>
  Type.Optional(orNull(Type.Object(partial(properties), description ? { description } : {})));
/** An optional, nullable list of objects (elements may be null too). */
const list = <P extends TProperties>(properties: P, maxItems: number) =>
  Type.Optional(orNull(Type.Array(orNull(Type.Object(partial(properties))), { maxItems })));
const strings = (maxItems: number, maxLength = NAME) =>
  Type.Optional(orNull(Type.Array(orNull(Type.String({ maxLength })), { maxItems })));
/** A list whose element shape is not fixed by any agent version we know: only the count is bounded. */
const anyList = (maxItems: number): TArray => Type.Array(Type.Unknown(), { maxItems });

type AllOptional<P extends TProperties> = { [K in keyof P]: TOptional<P[K]> };
/** Every field of a block may be absent. */
function partial<P extends TProperties>(properties: P): AllOptional<P> {
  return Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, Type.Optional(v)])) as AllOptional<P>;
}

const System = Type.Object(partial({
  hostname: str(SHORT),
  ip: str(SHORT),
  os: str(SHORT),
  os_id: str(SHORT),
  os_version: str(SHORT),
  kernel: str(SHORT),
  architecture: str(SHORT),
  arch: str(SHORT),
  uptime_seconds: num(),
  boot_time: str(64),
}), { description: 'Required. hostname replaces a placeholder name on the first snapshot; ip, os_id/os feed the server row' });

const CpuCore = {
  core: num(), user_percent: num(), system_percent: num(), iowait_percent: num(), idle_percent: num(),
  irq_percent: num(), softirq_percent: num(), steal_percent: num(),
};

const Cpu = {
  model: str(), user_percent: num(), system_percent: num(), iowait_percent: num(), idle_percent: num(), steal_percent: num(),
  load_1m: num(), load_5m: num(), load_15m: num(),
  cores: list(CpuCore, 4096),
};

const Memory = {
  total_mb: num(), used_mb: num(), available_mb: num(), free_mb: num(), cached_mb: num(), buffers_mb: num(),
  swap_total_mb: num(), swap_used_mb: num(),
};

const Disk = {
  device: str(), mount: str(4096), fstype: str(), options: str(TEXT),
  total_gb: num(), used_gb: num(), available_gb: num(), percent_used: num(),
  io_read_mb_s: num(), io_write_mb_s: num(), latency_p99_ms: num(),
  inodes_total: num(), inodes_used: num(), inodes_free: num(),
};

const SmartDrive = {
  device: str(), model: str(), serial: str(), type: str(), health: str(),
  temperature_c: num(), percentage_used: num(), power_on_hours: num(),
  reallocated_sectors: num(), pending_sectors: num(), media_errors: num(),
};

const Nic = {
  interface: str(), mac: str(), operstate: str(), bond_master: str(), speed_mbps: num(),
  rx_bytes_sec: num(), tx_bytes_sec: num(), rx_packets: num(), tx_packets: num(),
  rx_errors: num(), tx_errors: num(), rx_drops: num(), tx_drops: num(),
};

const RaidArray = {
  device: str(), name: str(), level: str(), state: str(), degraded: bool(),
  active_disks: num(), total_disks: num(), sync_percent: num(),
  disks: strings(1024), failed_disks: strings(1024),
};

const IpmiSensor = {
  name: str(), type: str(), unit: str(), status: str(), value: num(),
  lower_critical: num(), lower_non_critical: num(), upper_non_critical: num(), upper_critical: num(),
};

const Ipmi = {
  available: bool(),
  sel_entries_count: num(),
  ecc_errors: block({ correctable: num(), uncorrectable: num() }),
  sensors: list(IpmiSensor, 4096),
  sel_events_recent: list({ id: str(), timestamp: str(), sensor: str(), event: str(), severity: str(), asserted: bool() }, 4096),
  fans: list({ name: str(), rpm: num(), status: str() }, 1024),
  detection: block({ available: bool(), reason: str() }),
};

const ThermalReading = { chip: str(), label: str(), celsius: num() };

const GpuDevice = {
  index: num(), name: str(), uuid: str(), temperature_c: num(), utilization_percent: num(),
  memory_used_mb: num(), memory_total_mb: num(), power_draw_w: num(), power_limit_w: num(),
  fan_percent: num(), throttle_reasons: strings(64),
};

const Security = {
  ssh: block({ rootPasswordExposed: bool(), permitRootLogin: str(), passwordAuthentication: bool(), port: num() }),
  firewall: block({ active: bool(), source: str(), details: str(TEXT) }),
  pending_updates: block({ distro: str(), pendingCount: num(), securityCount: num(), available: bool() }),
  kernel_vulns: list({ name: str(), status: str(TEXT), mitigated: bool() }, 1024),
  kernel_reboot: block({ needsReboot: bool(), running: str(), installed: str() }),
  auto_updates: block({ configured: bool(), mechanism: str(), details: str(TEXT) }),
};

const ZfsPool = {
  name: str(), state: str(), size_gb: num(), allocated_gb: num(), free_gb: num(), capacity_percent: num(), fragmentation_percent: num(),
  read_errors: num(), write_errors: num(), checksum_errors: num(),
  scrub_state: str(), scrub_errors: num(), last_scrub: str(),
};

export const Snapshot = Type.Object({
  timestamp: Type.String({ format: 'date-time', maxLength: 64, description: 'When the agent took the snapshot (ISO 8601)' }),
  collector_version: Type.Optional(str(64)),
  system: System,
  cpu: block(Cpu),
  memory: block(Memory),
  disks: list(Disk, 1024),
  smart: list(SmartDrive, 1024),
  network: list(Nic, 4096),
  raid: list(RaidArray, 256),
  ipmi: block(Ipmi),
  os_alerts: block({ oom_kills_recent: num(), zombie_processes: num(), time_drift_ms: num() }),
  thermal: block({ available: bool(), source: str(), max_cpu_celsius: num(), cpu_readings: list(ThermalReading, 1024), other_readings: list(ThermalReading, 1024) }),
  dmi: block({ available: bool(), vendor: str(SHORT), raw_vendor: str(), product_name: str(SHORT), bios_version: str(), bios_date: str(), is_virtual: bool() }),
  gpu: block({ available: bool(), tier: str(), devices: list(GpuDevice, 64) }),
  security: block(Security),
  zfs: block({ available: bool(), pools: list(ZfsPool, 256) }),
  io_errors: block({ count: num(), devices: strings(1024), recent: Type.Optional(orNull(anyList(256))) }),
  io_latency: list({ device: str(), avg_read_latency_ms: num(), avg_write_latency_ms: num(), read_iops: num(), write_iops: num() }, 1024),
  conntrack: block({ available: bool(), count: num(), max: num(), percent: num() }),
  systemd: block({ failed_count: num(), failed_units: Type.Optional(orNull(anyList(4096))) }),
  ntp: block({ synced: bool(), offset_seconds: num(), source: str(), daemon_running: bool(), daemon_name: str() }),
  file_descriptors: block({ allocated: num(), free: num(), max: num(), percent: num() }),
  expected_reboot: Type.Optional(Type.Unsafe<boolean | Record<string, unknown> | null>({
    type: ['boolean', 'object', 'null'],
    description: 'true, or an object describing a planned reboot: the next short uptime is not an unexpected reboot',
  })),
}, { description: 'A snapshot as the agent sends it; unknown fields are kept' });

export type SnapshotBody = Static<typeof Snapshot>;
export type SmartDriveInput = NonNullable<NonNullable<SnapshotBody['smart']>[number]>;
