import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Clock } from './lib/clock.js';
import type { Mailer } from './lib/mailer.js';
import type { Store } from './store/db.js';
import { storeSharedState, type SharedState } from './shared-state.js';
import { registerAuth, type Authenticator, type Principal } from './http/auth.js';
import { frameworkErrorHandler, registerErrorHandling } from './http/errors-plugin.js';
import { trustProxyOption } from './http/client-ip.js';
import { memoryLimiter } from './http/rate-limit/memory-limiter.js';
import { passwordAttempts } from './http/rate-limit/password-attempts.js';
import type { Limiter } from './http/rate-limit/limiter.js';
import { registerRequestGuards } from './http/request-guards.js';
import { registerIdempotency } from './http/idempotency.js';
import { registerJsonParser } from './http/json-body.js';
import { registerAccessLog } from './http/access-log.js';
import { requestIdFor } from './http/request-id.js';
import { buildValidator } from './http/validation.js';
import './http/route-config.js';
import { accountsRepo } from './features/accounts/repo.js';
import { accountsRoutes } from './features/accounts/routes.js';
import { accountsService } from './features/accounts/service.js';
import { sessionsRepo } from './features/accounts/sessions-repo.js';
import { sessionTokens } from './features/accounts/sessions.js';
import { keysRepo } from './features/keys/repo.js';
import { keysRoutes } from './features/keys/routes.js';
import { keysService } from './features/keys/service.js';
import type { FeatureDeps } from './features/deps.js';
import { billingRoutes } from './features/billing/routes.js';
import { docsRoutes } from './features/meta/docs.js';
import { documentRouteAccess } from './features/meta/openapi-access.js';
import { probeRoutes } from './features/meta/probes.js';
import { versionRoutes } from './features/meta/version.js';
import { serversRoutes } from './features/servers/routes.js';
import { ingestRoutes } from './features/ingest/routes.js';
import { healthRoutes } from './features/health/routes.js';
import { alertsRoutes } from './features/alerts/routes.js';
import { channelsRoutes } from './features/channels/routes.js';

export interface AppDeps {
  config: Config;
  store: Store;
  clock: Clock;
  mailer: Mailer;
  logger: Logger;
  /** Outbound HTTP for the latest agent version from the package registry; tests point it at a local server. Notification channels go through lib/safe-fetch.ts instead. */
  fetch: typeof fetch;
  /** Rate-limit buckets: Redis-backed when REDIS_URL is set (main.ts); in memory by default. */
  limiter?: Limiter;
  /** Idempotency keys and the ingest gate: in Redis when REDIS_URL is set (main.ts); in the store by default. */
  shared?: SharedState;
}

export const BODY_LIMIT_BYTES = 1024 * 1024;

/** Builds the whole service from its dependencies; opens no socket and starts no timer. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, store, clock } = deps;
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    genReqId: requestIdFor,
    requestIdHeader: false,
    // One access-log line per request (registerAccessLog) instead of Fastify's two.
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT_BYTES,
    trustProxy: trustProxyOption(config.trustProxy),
    frameworkErrors: frameworkErrorHandler(config.publicUrl),
    schemaController: { compilersFactory: { buildValidator: buildValidator as never } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    done();
  });
  registerAccessLog(app);
  registerErrorHandling(app, config.publicUrl);
  registerJsonParser(app);
  const limiter = deps.limiter ?? memoryLimiter();
  const passwords = passwordAttempts({ limiter, clock, tiers: config.rateLimits.tiers });

  const accounts = accountsRepo(store.db);
  const sessions = sessionsRepo(store.db);
  const tokens = sessionTokens({ secretKey: config.secretKey, clock, repo: sessions });
  const keys = keysService({ keys: keysRepo(store.db), accounts, sessions, clock, passwords });

  const authenticator: Authenticator = {
    async authenticate(token): Promise<Principal | null> {
      if (token.startsWith('mk_')) return keys.authenticate(token);
      const session = await tokens.verify(token);
      if (!session) return null;
      return {
        accountId: session.account_id,
        userId: session.user_id,
        kind: 'session',
        credentialId: session.id,
        scopes: new Set(['read', 'write', 'admin']),
        capabilities: new Set(),
      };
    },
  };
  registerRequestGuards(app, { config, limiter, clock });
  registerAuth(app, authenticator);
  const shared = deps.shared ?? storeSharedState(store.db);
  registerIdempotency(app, { db: store.db, clock, secretKey: config.secretKey, store: shared.idempotency });
  const feature: FeatureDeps = { config, store, clock, logger: deps.logger, fetch: deps.fetch, keys, ingestGate: shared.ingestGate };

  await app.register(swagger, {
    transform: documentRouteAccess,
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Kiln API', version: 'v1', description: 'Self-hostable server monitoring.' },
      servers: config.publicUrl ? [{ url: `${config.publicUrl}/api/v1` }] : [{ url: '/api/v1' }],
      components: {
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'Session token, account key (mk_…) or, on /ingest, collector key (col_…)' } },
      },
      security: [{ bearer: [] }],
    },
  });

  await app.register(async (api) => {
    await api.register(accountsRoutes, {
      accounts: accountsService({ repo: accounts, sessions, tokens, clock, mailer: deps.mailer, log: deps.logger, passwords }),
      publicUrl: config.publicUrl,
    });
    await api.register(keysRoutes, { keys });
    await api.register(serversRoutes, feature);
    await api.register(ingestRoutes, feature);
    await api.register(healthRoutes, feature);
    await api.register(alertsRoutes, feature);
    await api.register(channelsRoutes, feature);
    await api.register(billingRoutes, feature);
    await api.register(versionRoutes, feature);
  }, { prefix: '/api/v1' });

  await app.register(docsRoutes, feature);
  await app.register(probeRoutes, { store });
  return app as unknown as FastifyInstance;
}
