import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { storeUnavailable } from '../../http/errors.js';
import { responses } from '../../http/schemas.js';
import type { Store } from '../../store/db.js';

const Probe = Type.Object({ status: Type.Literal('ok') });

/** Liveness and readiness for load balancers and orchestrators. */
export const probeRoutes: FastifyPluginAsyncTypebox<{ store: Store }> = async (app, { store }) => {
  app.get('/healthz', {
    config: { auth: 'public' },
    schema: { hide: true, response: { 200: Probe } },
  }, async () => ({ status: 'ok' as const }));

  app.get('/readyz', {
    config: { auth: 'public' },
    schema: { hide: true, response: responses({ 200: Probe }) },
  }, async () => {
    try {
      await store.ping();
    } catch {
      throw storeUnavailable();
    }
    return { status: 'ok' as const };
  });
};
