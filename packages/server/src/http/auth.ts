import type { FastifyInstance, FastifyRequest } from 'fastify';
import { sha256Hex } from '../lib/crypto.js';
import { ApiError } from './errors.js';
import type { Capability, Scope } from './route-config.js';

/** Who is calling: the result of one bearer token, whatever its kind. */
export interface Principal {
  accountId: string;
  userId: string;
  kind: 'session' | 'account_key';
  /** Session id or account-key id: re-authentication belongs to this one credential. */
  credentialId: string;
  scopes: ReadonlySet<Scope>;
  capabilities: ReadonlySet<Capability>;
}

export interface Authenticator {
  /** Resolves a session token or account key to its principal; null when unknown, expired or revoked. */
  authenticate(token: string): Promise<Principal | null>;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
    /** On `auth: 'collector'` routes: the SHA-256 of a well-formed collector key, not yet known to belong to a server. */
    collectorKeyHash: string | null;
  }
}

/** `col_` and 40 lowercase hex characters: the only shape a collector key has. */
export const COLLECTOR_KEY_SHAPE = /^col_[0-9a-f]{40}$/;

/** One answer for every credential that is not a current collector key, whatever the reason. */
export function invalidCollectorKey(): ApiError {
  return new ApiError('invalid_collector_key',
    'not a current collector key: the key may have been rotated or its server trashed or deleted; account keys and session tokens do not work here');
}

/** Scopes a grant implies: admin ⊃ write ⊃ read. */
export function expandScopes(granted: readonly Scope[]): Set<Scope> {
  const scopes = new Set<Scope>(granted);
  if (scopes.has('admin')) scopes.add('write');
  if (scopes.has('write')) scopes.add('read');
  return scopes;
}

export function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return null;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return match ? match[1]! : '';
}

/** The collector key hash of a collector route; the auth hook guarantees it is set. */
export function collectorKeyHashOf(request: FastifyRequest): string {
  if (!request.collectorKeyHash) throw new ApiError('unauthorized', 'this endpoint needs a collector key');
  return request.collectorKeyHash;
}

/**
 * Collector routes check only the key's shape here. Whether it belongs to a
 * live server is decided by the route's own query, so ingest can
 * authenticate, pass the 55-second gate and update the server in one
 * statement. Account credentials are never collector keys.
 */
function authenticateCollector(request: FastifyRequest): void {
  const token = bearerToken(request);
  if (token === null) throw new ApiError('unauthorized', 'send Authorization: Bearer <collector key>');
  if (!COLLECTOR_KEY_SHAPE.test(token)) throw invalidCollectorKey();
  request.collectorKeyHash = sha256Hex(token);
}

/** The principal of an authenticated route; the auth hook guarantees it is set. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new ApiError('unauthorized', 'this endpoint needs a credential');
  return request.principal;
}

/**
 * One hook authenticates every route. A route declares `auth`, `scope` and
 * `capability` in its config; handlers never check credentials themselves.
 */
export function registerAuth(app: FastifyInstance, authenticator: Authenticator): void {
  app.decorateRequest('principal', null);
  app.decorateRequest('collectorKeyHash', null);
  app.addHook('onRequest', async (request) => {
    if (request.is404) return;
    const config = request.routeOptions.config;
    const mode = config.auth ?? 'account';
    if (mode === 'collector') return authenticateCollector(request);
    if (mode !== 'account') return;

    const token = bearerToken(request);
    if (token === null) throw new ApiError('unauthorized', 'send Authorization: Bearer <session token or account key>');
    if (token === '') throw new ApiError('invalid_token', 'the Authorization header must be "Bearer <token>"');
    if (token.startsWith('col_')) {
      throw new ApiError('invalid_token', 'a collector key only authenticates the ingest endpoint');
    }
    const principal = await authenticator.authenticate(token);
    if (!principal) throw new ApiError('invalid_token', 'the token is invalid, expired or revoked');

    const scope = config.scope ?? 'read';
    if (!principal.scopes.has(scope)) {
      throw new ApiError('insufficient_scope', `this endpoint needs an account key with the ${scope} scope`);
    }
    if (config.capability && !principal.capabilities.has(config.capability)) {
      throw new ApiError('missing_capability', `this endpoint needs an account key with the ${config.capability} capability`);
    }
    request.principal = principal;
  });
}
