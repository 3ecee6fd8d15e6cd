import { Migrator, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import * as foundation from './migrations/2026-11-22T0300_foundation.js';

/** The one migration history; both dialects run the same list in the same order. */
const MIGRATIONS: Record<string, Migration> = {
  '2026-11-22T0300_foundation': foundation,
};

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

/** Applies pending migrations under the migrator's lock; throws with the failing migration's name. */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error) {
    const where = failed ? ` in ${failed.migrationName}` : '';
    throw new Error(`migration failed${where}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
