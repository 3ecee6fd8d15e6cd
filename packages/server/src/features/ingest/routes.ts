import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FeatureDeps } from '../deps.js';

/** POST and GET /ingest: agents push snapshots and check their collector key. */
export const ingestRoutes: FastifyPluginAsyncTypebox<FeatureDeps> = async () => {};
