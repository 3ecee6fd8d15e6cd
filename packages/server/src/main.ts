import pino from 'pino';
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { systemClock } from './lib/clock.js';
import { logMailer, smtpMailer } from './lib/mailer.js';
import { logRedaction } from './lib/log.js';
import { openStore } from './store/db.js';
import { migrateToLatest } from './store/migrate.js';
import { serviceJobs } from './jobs/index.js';
import { startScheduler } from './jobs/scheduler.js';
import { memoryLimiter } from './http/rate-limit/memory-limiter.js';
import { closeRedis, openRedis } from './http/rate-limit/redis-client.js';
import { redisLimiter } from './http/rate-limit/redis-limiter.js';
import { redisSharedState } from './shared-state.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`kiln: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const logger = pino({ level: config.logLevel, redact: logRedaction });
  const store = openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, sqliteBusyTimeoutMs: config.sqliteBusyTimeoutMs, logger });
  const applied = await migrateToLatest(store);
  if (applied.length > 0) logger.info({ migrations: applied }, 'migrations applied');

  const mailer = config.smtpUrl ? smtpMailer(config.smtpUrl, config.mailFrom) : logMailer(logger);
  const redis = config.redisUrl ? await openRedis(config.redisUrl, logger) : null;
  const limiter = redis ? redisLimiter({ redis, logger }) : memoryLimiter();
  const shared = redis ? redisSharedState({ redis, db: store.db, logger }) : undefined;
  const app = await buildApp({ config, store, clock: systemClock, mailer, logger, fetch: globalThis.fetch, limiter, shared });
  const scheduler = startScheduler(serviceJobs(store, config), { clock: systemClock, logger });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: no new connections, finishing requests in flight');
    const force = setTimeout(() => {
      logger.error('shutdown took longer than 25 s; exiting');
      process.exit(1);
    }, 25_000);
    force.unref();
    try {
      await scheduler.stop();
      await app.close();
      await limiter.close();
      if (redis) await closeRedis(redis);
      await mailer.close();
      await store.close();
      logger.info('stopped');
      process.exit(0);
    } catch (err) {
      logger.error({ err }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));

  await app.listen({ port: config.port, host: config.host });
  logger.info({ store: store.dialect, data_dir: store.dialect === 'sqlite' ? config.dataDir : undefined }, 'kiln is running');
}

main().catch((err: unknown) => {
  process.stderr.write(`kiln: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
