import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { DAY_MS, MINUTE_MS, addMs, iso, type Clock } from '../lib/clock.js';
import { canonicalJson, constantTimeEqual, sealer, sha256Hex } from '../lib/crypto.js';
import type { Database } from '../store/schema.js';
import { ApiError } from './errors.js';
import { sqlIdempotencyStore, type ClaimRef, type IdempotencyRow, type IdempotencyStore } from './idempotency-store.js';

/** How long a finished response is replayed for the same key. */
export const IDEMPOTENCY_TTL_MS = DAY_MS;
/** How long a claim blocks retries; after that a request that died without answering no longer holds the key. */
export const IDEMPOTENCY_LOCK_MS = MINUTE_MS;
export const REPLAYED_HEADER = 'Idempotency-Replayed';

const KEY_SHAPE = /^[\x20-\x7E]{1,255}$/;
/** Rounds of claim-then-read; another round follows only when a finished entry no longer opened and was discarded. */
const CLAIM_ATTEMPTS = 3;

/** What a key's request is compared by: the same key with another method, path or body is a misuse (422). */
export function requestHash(method: string, url: string, body: unknown): string {
  return sha256Hex(canonicalJson({ method, url, body: body ?? null }));
}

type Outcome =
  | { kind: 'claimed'; claim: ClaimRef }
  | { kind: 'in_flight' }
  | { kind: 'reused' }
  | { kind: 'replay'; status: number; contentType: string; body: string };

/**
 * Stored responses are encrypted (AES-256-GCM, bound to account and key):
 * a replayed registration holds the collector key, which must not sit in the
 * store readable for 24 hours when the server keeps only its hash.
 */
function responseSealer(secretKey: string) {
  const sealed = sealer(secretKey, 'idempotency-response');
  const context = (accountId: string, idemKey: string) => `${accountId}\n${idemKey}`;
  return {
    seal: (accountId: string, idemKey: string, text: string): string => sealed.seal(context(accountId, idemKey), text),
    open: (accountId: string, idemKey: string, text: string): string | null => sealed.open(context(accountId, idemKey), text),
  };
}

/** A replayed error envelope names the replaying request, so request_id still equals X-Request-Id. */
function replayBody(status: number, body: string, requestId: string): string {
  if (status < 400) return body;
  try {
    const envelope = JSON.parse(body) as Record<string, unknown>;
    if (envelope && typeof envelope === 'object' && 'request_id' in envelope) {
      return JSON.stringify({ ...envelope, request_id: requestId });
    }
  } catch {
    // not JSON: replay as stored
  }
  return body;
}

/**
 * Idempotency-Key for routes declaring `idempotent: true`. The key is claimed
 * in preValidation, before the schema runs, so a deterministic 400 is cached
 * like a success; the response is stored in onSend. 5xx and 429 free the key,
 * since retrying them may succeed.
 */
export function registerIdempotency(
  app: FastifyInstance,
  deps: { db: Kysely<Database>; clock: Clock; secretKey: string; store?: IdempotencyStore },
): void {
  const store = deps.store ?? sqlIdempotencyStore(deps.db);
  const sealer = responseSealer(deps.secretKey);
  const claims = new WeakMap<FastifyRequest, ClaimRef>();

  async function claim(accountId: string, idemKey: string, hash: string): Promise<Outcome> {
    const now = deps.clock.now();
    const row: IdempotencyRow = {
      account_id: accountId, idem_key: idemKey, request_hash: hash, state: 'in_flight', status_code: null, response_body: null,
      created_at: iso(now), locked_until: iso(addMs(now, IDEMPOTENCY_LOCK_MS)), expires_at: iso(addMs(now, IDEMPOTENCY_TTL_MS)),
    };
    for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
      const found = await store.claim(row);
      if (found.kind === 'claimed') return { kind: 'claimed', claim: row };
      if (found.kind === 'contended') break;
      const existing = found.entry;
      if (!constantTimeEqual(existing.request_hash, hash)) return { kind: 'reused' };
      if (existing.state === 'in_flight') return { kind: 'in_flight' };
      const opened = sealer.open(accountId, idemKey, existing.response_body ?? '');
      if (opened === null) {
        await store.discard(existing);
        continue;
      }
      const stored = JSON.parse(opened) as { content_type: string; body: string };
      return { kind: 'replay', status: existing.status_code ?? 200, contentType: stored.content_type, body: stored.body };
    }
    return { kind: 'in_flight' };
  }

  app.addHook('preValidation', async (request, reply) => {
    if (!request.routeOptions.config.idempotent || !request.principal) return;
    const idemKey = request.headers['idempotency-key'];
    if (idemKey === undefined) return;
    if (typeof idemKey !== 'string' || !KEY_SHAPE.test(idemKey)) {
      const issue = 'must be 1-255 printable ASCII characters';
      throw new ApiError('validation_failed', `Idempotency-Key ${issue}`, [{ field: 'Idempotency-Key', issue }]);
    }
    const outcome = await claim(request.principal.accountId, idemKey, requestHash(request.method, request.url, request.body));
    switch (outcome.kind) {
      case 'claimed':
        claims.set(request, outcome.claim);
        return;
      case 'in_flight':
        throw new ApiError('idempotency_in_flight', 'a request with this Idempotency-Key is still being processed; retry shortly for its response');
      case 'reused':
        throw new ApiError('idempotency_key_reused', 'this Idempotency-Key was already used with a different request in the last 24 hours');
      case 'replay':
        reply.code(outcome.status).header(REPLAYED_HEADER, 'true').type(outcome.contentType);
        return reply.send(replayBody(outcome.status, outcome.body, request.id));
    }
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const held = claims.get(request);
    if (!held) return payload;
    claims.delete(request);
    const status = reply.statusCode;
    const replayable = payload === null || payload === undefined || typeof payload === 'string';
    try {
      if (status >= 500 || status === 429 || !replayable) {
        await store.release(held);
      } else {
        const stored = JSON.stringify({ content_type: String(reply.getHeader('content-type') ?? 'application/json; charset=utf-8'), body: payload ?? '' });
        await store.complete(held, status, sealer.seal(held.account_id, held.idem_key, stored));
      }
    } catch (err) {
      // The response itself is sound; the claim's lock runs out and frees the key.
      request.log.error({ err }, 'idempotency record not written');
    }
    return payload;
  });
}
