/** What GET /servers/:id shows of the host, from its latest snapshot; hardware is never taken from registration. */
export interface HardwareSummary {
  cpu_cores: number | null;
  ram_mb: number | null;
  os: string | null;
  kernel: string | null;
  architecture: string | null;
}

type Json = Record<string, unknown>;

const objectAt = (value: unknown): Json | null => (value !== null && typeof value === 'object' && !Array.isArray(value) ? value as Json : null);
const textAt = (value: unknown): string | null => (typeof value === 'string' && value.trim() !== '' ? value : null);
const numberAt = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

/**
 * cpu_cores is the length of cpu.cores (null when the list is missing or
 * empty), ram_mb memory.total_mb, os system.os, kernel system.kernel,
 * architecture system.architecture or else system.arch. Null before the
 * first snapshot.
 */
export function hardwareSummary(snapshotJson: string | null | undefined): HardwareSummary | null {
  if (!snapshotJson) return null;
  let snapshot: Json | null;
  try {
    snapshot = objectAt(JSON.parse(snapshotJson));
  } catch {
    return null;
  }
  if (!snapshot) return null;
  const system = objectAt(snapshot.system) ?? {};
  const cores = objectAt(snapshot.cpu)?.cores;
  return {
    cpu_cores: Array.isArray(cores) && cores.length > 0 ? cores.length : null,
    ram_mb: numberAt(objectAt(snapshot.memory)?.total_mb),
    os: textAt(system.os),
    kernel: textAt(system.kernel),
    architecture: textAt(system.architecture) ?? textAt(system.arch),
  };
}
