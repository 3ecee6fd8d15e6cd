import 'fastify';
import type { RouteLimit } from './rate-limit/tiers.js';

/** Who may call a route. Routes without `auth` need a session token or an account key. */
export type AuthMode = 'public' | 'account' | 'collector';
export type Scope = 'read' | 'write' | 'admin';
export type Capability = 'servers:purge';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthMode;
    /** Scope an account key needs; defaults to `read`. A session token holds every scope. */
    scope?: Scope;
    /** A capability the credential must hold (never implied by a scope). */
    capability?: Capability;
    /** Honour the Idempotency-Key header (first response cached 24 h). */
    idempotent?: boolean;
    /** A per-account sub-limit of the spec's Limits table, checked after authentication. */
    rateLimit?: RouteLimit;
  }
}
