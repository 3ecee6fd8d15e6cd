import type { Kysely } from 'kysely';
import type { Database } from '../../store/schema.js';
import type { ActiveAlerts } from '../health/service.js';
import { ACTIVE } from './changes-repo.js';

/** The health endpoint's view of a server's alerts: how many are active and the worst severity among them that sets a status. */
export function activeAlerts(db: Kysely<Database>): ActiveAlerts {
  return {
    async summary(serverId) {
      const rows = await db.selectFrom('alerts')
        .select((eb) => ['severity', eb.fn.countAll<number>().as('n')])
        .where('server_id', '=', serverId).where('status', '=', ACTIVE)
        .groupBy('severity')
        .execute();
      const count = rows.reduce((sum, row) => sum + Number(row.n), 0);
      const has = (severity: string) => rows.some((row) => row.severity === severity);
      // info alerts count but leave the status healthy: they inform, they do not warn.
      return { count, worst: has('critical') ? 'critical' : has('warning') ? 'warning' : null };
    },
  };
}
