import { loadConfig } from '../config.js';
import { openStore } from './db.js';
import { migrateToLatest } from './migrate.js';

/** `npm run migrate`: applies pending migrations to the configured store and exits. */
const config = loadConfig();
const store = openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, sqliteBusyTimeoutMs: config.sqliteBusyTimeoutMs });
try {
  const applied = await migrateToLatest(store);
  process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'already up to date\n');
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
} finally {
  await store.close();
}
