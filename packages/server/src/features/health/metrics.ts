/**
 * The numbers Kiln keeps per snapshot, by series name:
 *   cpu_percent, ram_percent, swap_used_mb, disk_max_percent, disk:<mount>,
 *   rx_mbps, tx_mbps, cpu_temp_c.
 * A series is absent when the snapshot does not carry its input (a missing
 * block is not a zero).
 */
export type MetricValues = Record<string, number>;

export const DISK_SERIES_PREFIX = 'disk:';

type Num = number | null | undefined;

/** Only the snapshot fields the metrics read; a validated ingest body satisfies it. */
export interface SnapshotMetricsInput {
  cpu?: { idle_percent?: Num; user_percent?: Num; system_percent?: Num; iowait_percent?: Num } | null;
  memory?: { total_mb?: Num; used_mb?: Num; available_mb?: Num; swap_used_mb?: Num } | null;
  disks?: Array<{ mount?: string | null; percent_used?: Num } | null> | null;
  network?: Array<{ interface?: string | null; rx_bytes_sec?: Num; tx_bytes_sec?: Num } | null> | null;
  thermal?: { max_cpu_celsius?: Num } | null;
  ipmi?: { sensors?: Array<{ name?: string | null; value?: Num; type?: string | null; unit?: string | null } | null> | null } | null;
}

const finite = (value: Num): value is number => typeof value === 'number' && Number.isFinite(value);

// Control characters and lone surrogates become U+FFFD in series names, as in alert subjects: PostgreSQL's
// jsonb (the history reads cast the stored JSON) refuses \u0000 and unpaired surrogate escapes.
const UNSTORABLE = /[\p{Cc}\p{Cs}]/gu;
const seriesKey = (text: string) => text.replace(UNSTORABLE, '\uFFFD');
const clampPercent = (value: number) => Math.min(100, Math.max(0, value));
const bytesPerSecToMbps = (value: number) => (value * 8) / 1_000_000;

function cpuPercent(cpu: SnapshotMetricsInput['cpu']): number | null {
  if (!cpu) return null;
  if (finite(cpu.idle_percent)) return clampPercent(100 - cpu.idle_percent);
  const parts = [cpu.user_percent, cpu.system_percent, cpu.iowait_percent].filter(finite);
  return parts.length > 0 ? clampPercent(parts.reduce((a, b) => a + b, 0)) : null;
}

function ramPercent(memory: SnapshotMetricsInput['memory']): number | null {
  if (!memory || !finite(memory.total_mb) || memory.total_mb <= 0) return null;
  if (finite(memory.available_mb)) return clampPercent(((memory.total_mb - memory.available_mb) / memory.total_mb) * 100);
  if (finite(memory.used_mb)) return clampPercent((memory.used_mb / memory.total_mb) * 100);
  return null;
}

/** thermal.max_cpu_celsius, else the hottest IPMI CPU temperature sensor. */
function cpuTemperature(snapshot: SnapshotMetricsInput): number | null {
  if (finite(snapshot.thermal?.max_cpu_celsius)) return snapshot.thermal.max_cpu_celsius;
  const readings = (snapshot.ipmi?.sensors ?? [])
    .filter((s) => s && finite(s.value) && /cpu/i.test(s.name ?? '') && (/temp/i.test(s.type ?? '') || /degrees|°?c$/i.test(s.unit ?? '')))
    .map((s) => s!.value as number);
  return readings.length > 0 ? Math.max(...readings) : null;
}

export function extractMetrics(snapshot: SnapshotMetricsInput): MetricValues {
  const values: MetricValues = {};
  const set = (name: string, value: number | null | undefined) => {
    if (finite(value)) values[name] = value;
  };

  set('cpu_percent', cpuPercent(snapshot.cpu));
  set('ram_percent', ramPercent(snapshot.memory));
  set('swap_used_mb', snapshot.memory?.swap_used_mb);

  let diskMax: number | null = null;
  for (const disk of snapshot.disks ?? []) {
    if (!disk || !finite(disk.percent_used) || !disk.mount) continue;
    set(`${DISK_SERIES_PREFIX}${seriesKey(disk.mount)}`, disk.percent_used);
    diskMax = Math.max(diskMax ?? 0, disk.percent_used);
  }
  set('disk_max_percent', diskMax);

  if (snapshot.network) {
    let rx = 0;
    let tx = 0;
    for (const nic of snapshot.network) {
      if (!nic || nic.interface === 'lo') continue;
      if (finite(nic.rx_bytes_sec)) rx += bytesPerSecToMbps(nic.rx_bytes_sec);
      if (finite(nic.tx_bytes_sec)) tx += bytesPerSecToMbps(nic.tx_bytes_sec);
    }
    set('rx_mbps', rx);
    set('tx_mbps', tx);
  }

  set('cpu_temp_c', cpuTemperature(snapshot));
  return values;
}
