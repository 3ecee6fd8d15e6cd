import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FeatureDeps } from '../deps.js';

/** /api/v1/openapi.json, /docs and /docs/errors. */
export const docsRoutes: FastifyPluginAsyncTypebox<FeatureDeps> = async () => {};
