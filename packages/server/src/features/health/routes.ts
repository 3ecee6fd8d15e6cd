import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/auth.js';
import { IdParams, responses } from '../../http/schemas.js';
import { activeAlerts } from '../alerts/active-alerts.js';
import type { FeatureDeps } from '../deps.js';
import { healthRepo } from './repo.js';
import { HealthResponse, HistoryQuery, HistoryResponse } from './schemas.js';
import { healthService } from './service.js';

const params = IdParams('server_id');

/** GET /servers/:id/health and /servers/:id/health/history. */
export const healthRoutes: FastifyPluginAsyncTypebox<FeatureDeps> = async (app, deps) => {
  const health = healthService({ repo: healthRepo(deps.store.db, deps.store.dialect), clock: deps.clock, alerts: activeAlerts(deps.store.db) });
  const tags = ['Health'];

  app.get('/servers/:server_id/health', {
    schema: { tags, summary: 'Current health: status and the latest snapshot\'s values', params, response: responses({ 200: HealthResponse }) },
  }, async (request) => health.current(principalOf(request).accountId, request.params.server_id));

  app.get('/servers/:server_id/health/history', {
    schema: { tags, summary: 'Time series of one metric (avg, min, max per bucket)', params, querystring: HistoryQuery, response: responses({ 200: HistoryResponse }) },
  }, async (request) => health.history(principalOf(request).accountId, request.params.server_id, request.query));
};
