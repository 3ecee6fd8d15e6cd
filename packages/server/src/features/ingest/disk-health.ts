/**
 * `disk_health_rollup` (contract, Servers): the worst state over the
 * SMART-monitored drives of a snapshot.
 */
export const DISK_HEALTH_STATES = ['healthy', 'declining', 'failing', 'broken'] as const;
export type DiskHealth = (typeof DISK_HEALTH_STATES)[number];

type Num = number | null | undefined;

export interface SmartDriveHealthInput {
  health?: string | null;
  percentage_used?: Num;
  power_on_hours?: Num;
  reallocated_sectors?: Num;
  pending_sectors?: Num;
}

export const WEAR_FAILING_PERCENT = 95;
export const WEAR_DECLINING_PERCENT = 80;
export const POWER_ON_HOURS_DECLINING = 40_000;

const finite = (value: Num): value is number => typeof value === 'number' && Number.isFinite(value);
const severity = (state: DiskHealth) => DISK_HEALTH_STATES.indexOf(state);

/**
 * One drive: `broken` when it reports a health other than PASSED or OK
 * (compared without case; an empty or missing health is unknown, not
 * broken); `failing` with reallocated or pending sectors, or wear ≥ 95 %;
 * `declining` with wear ≥ 80 % or more than 40,000 power-on hours; else
 * `healthy`. A value that is missing or not a finite number counts as unknown.
 */
export function driveHealth(drive: SmartDriveHealthInput): DiskHealth {
  const health = typeof drive.health === 'string' ? drive.health.trim().toUpperCase() : '';
  if (health !== '' && health !== 'PASSED' && health !== 'OK') return 'broken';
  const wear = finite(drive.percentage_used) ? drive.percentage_used : null;
  if ((finite(drive.reallocated_sectors) && drive.reallocated_sectors > 0)
    || (finite(drive.pending_sectors) && drive.pending_sectors > 0)
    || (wear !== null && wear >= WEAR_FAILING_PERCENT)) return 'failing';
  if ((wear !== null && wear >= WEAR_DECLINING_PERCENT)
    || (finite(drive.power_on_hours) && drive.power_on_hours > POWER_ON_HOURS_DECLINING)) return 'declining';
  return 'healthy';
}

/** The worst drive wins; no SMART drives (or only null entries) is `healthy`. */
export function diskHealthRollup(drives: ReadonlyArray<SmartDriveHealthInput | null>): DiskHealth {
  let worst: DiskHealth = 'healthy';
  for (const drive of drives) {
    if (!drive) continue;
    const state = driveHealth(drive);
    if (severity(state) > severity(worst)) worst = state;
    if (worst === 'broken') break;
  }
  return worst;
}
