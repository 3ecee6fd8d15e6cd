import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Clock } from '../lib/clock.js';
import type { Store } from '../store/db.js';
import type { KeysService } from './keys/service.js';
import type { IngestGate } from './ingest/gate.js';

/** What every feature plugin receives from buildApp. */
export interface FeatureDeps {
  config: Config;
  store: Store;
  clock: Clock;
  logger: Logger;
  fetch: typeof fetch;
  /** Account keys: re-authentication state for guarded actions such as purge. */
  keys: KeysService;
  /** The 55-second gate in front of the store's: in Redis when REDIS_URL is set. */
  ingestGate: IngestGate;
}
