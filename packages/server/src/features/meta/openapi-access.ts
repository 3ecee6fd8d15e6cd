import type { FastifySchema, RouteOptions } from 'fastify';

/** The OpenAPI extension carrying a route's `auth`, `scope`, `capability` and `rateLimit` config. */
export const ACCESS_EXTENSION = 'x-kiln-access';

type SwaggerTransformInput = { schema: FastifySchema | undefined; url: string; route: RouteOptions };

/**
 * A `transform` for @fastify/swagger that writes each route's access rules
 * into its operation: the `x-kiln-access` extension (read by /docs) and, for
 * public routes, `security: []`, so OpenAPI clients do not send a token where
 * none is needed. The route config is the one source of who may call what.
 * Wire it in app.ts: `app.register(swagger, { transform: documentRouteAccess, openapi: … })`.
 */
export function documentRouteAccess({ schema, url, route }: SwaggerTransformInput) {
  const config = route.config ?? {};
  const auth = config.auth ?? 'account';
  const access: Record<string, string> = { auth };
  if (auth === 'account') access.scope = config.scope ?? 'read';
  if (config.capability) access.capability = config.capability;
  // The per-account sub-limit (tier name of RATE_LIMITS), from the option that enforces it.
  if (config.rateLimit) access.rate_limit = config.rateLimit;
  return {
    schema: { ...schema, [ACCESS_EXTENSION]: access, ...(auth === 'public' ? { security: [] } : {}) },
    url,
  };
}
