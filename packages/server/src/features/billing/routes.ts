import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FeatureDeps } from '../deps.js';

export const billingRoutes: FastifyPluginAsyncTypebox<FeatureDeps> = async () => {};
