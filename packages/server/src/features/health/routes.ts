import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FeatureDeps } from '../deps.js';

/** GET /servers/:id/health and /servers/:id/health/history. */
export const healthRoutes: FastifyPluginAsyncTypebox<FeatureDeps> = async () => {};
