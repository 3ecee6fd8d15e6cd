/**
 * The fixed list of error codes. Each maps to one HTTP status; the docs page
 * `/docs/errors#<code>` is generated from this list, so it cannot drift.
 */
export interface ErrorCodeInfo {
  status: number;
  retryable: boolean;
  summary: string;
  action: string;
}

export const ERROR_CODES = {
  validation_failed: {
    status: 400, retryable: false,
    summary: 'A field of the request has the wrong type, length or value.',
    action: 'Read `details`: each element names the field (a JSON pointer such as `/tags/3`, or a parameter name) and what is wrong with it. Fix the request; retrying it unchanged gives the same answer.',
  },
  invalid_json: {
    status: 400, retryable: false,
    summary: 'The body is not valid JSON, is empty although JSON was announced, or carries a forbidden key such as `__proto__`.',
    action: 'Send a well-formed JSON object with `Content-Type: application/json`.',
  },
  confirmation_required: {
    status: 400, retryable: false,
    summary: 'A destructive request was sent without `confirm=true`.',
    action: 'Repeat the request with the query parameter `confirm=true` once you are sure.',
  },
  no_card_on_file: {
    status: 400, retryable: false,
    summary: 'Historical: a restore once required a payment method. Kiln no longer charges, so current versions never send it.',
    action: 'None; restore needs no card now.',
  },
  invalid_verification_token: {
    status: 400, retryable: false,
    summary: 'The e-mail verification token is unknown, already used, or older than 24 hours.',
    action: 'Use the link from the most recent verification e-mail.',
  },
  unauthorized: {
    status: 401, retryable: false,
    summary: 'No credential was sent to an endpoint that needs one.',
    action: 'Send `Authorization: Bearer <token>` with a session token or an account key.',
  },
  invalid_credentials: {
    status: 401, retryable: false,
    summary: 'The e-mail and password do not match an account, or the password given for re-authentication is wrong.',
    action: 'Check the e-mail address and password. The answer is the same whether or not the e-mail is registered.',
  },
  invalid_token: {
    status: 401, retryable: false,
    summary: 'The bearer credential is malformed, expired, revoked, or of a kind this endpoint does not take (a collector key outside `/ingest`).',
    action: 'Log in again for a new session token, or use a valid account key.',
  },
  invalid_collector_key: {
    status: 401, retryable: false,
    summary: 'The ingest endpoint got something other than a current collector key: a rotated-out key, the key of a trashed or purged server, or an account credential.',
    action: 'Configure the agent with the collector key shown at registration or at the last rotation.',
  },
  insufficient_scope: {
    status: 403, retryable: false,
    summary: 'The account key lacks the scope this endpoint needs (`write` for changes, `admin` for key management).',
    action: 'Use a key created with the needed scope, or a session token.',
  },
  missing_capability: {
    status: 403, retryable: false,
    summary: 'Permanent deletion needs an account key created with the `servers:purge` capability; no scope and no session token implies it.',
    action: 'Create an account key with `capabilities: ["servers:purge"]` and use it for the purge.',
  },
  reauth_required: {
    status: 403, retryable: false,
    summary: 'Permanent deletion needs a password re-authentication of the same credential within the last 5 minutes.',
    action: 'Call `POST /api/v1/account/verify-password` with the purging key, then repeat the purge.',
  },
  not_found: {
    status: 404, retryable: false,
    summary: 'No such path, or no such resource in your account. Resources of other accounts are reported the same way.',
    action: 'Check the path and the id.',
  },
  method_not_allowed: {
    status: 405, retryable: false,
    summary: 'The path exists but does not take this HTTP method.',
    action: 'Use one of the methods listed in the `Allow` response header.',
  },
  email_taken: {
    status: 409, retryable: false,
    summary: 'An account with this e-mail address (compared case-insensitively) already exists.',
    action: 'Log in instead, or register with another address.',
  },
  not_trashed: {
    status: 409, retryable: false,
    summary: 'Only a server in the trash can be purged.',
    action: 'Move the server to the trash with `DELETE /api/v1/servers/:id?confirm=true` first.',
  },
  not_restorable: {
    status: 409, retryable: false,
    summary: 'The server is neither trashed nor suspended, so there is nothing to restore.',
    action: 'None needed; the server is already active.',
  },
  idempotency_in_flight: {
    status: 409, retryable: true,
    summary: 'A request with the same Idempotency-Key is still being processed.',
    action: 'Retry after a moment; you will then receive the first request\'s response.',
  },
  channel_limit_reached: {
    status: 409, retryable: false,
    summary: 'The account already has the most notification channels it may have (50).',
    action: 'Delete a channel you no longer need, or send several recipients through one e-mail channel.',
  },
  no_legacy_subscription: {
    status: 409, retryable: false,
    summary: 'The account has no residual legacy subscription for this billing action to act on.',
    action: 'None; Kiln charges for nothing.',
  },
  gone: {
    status: 410, retryable: false,
    summary: 'The endpoint is retired (billing checkout: Kiln no longer charges).',
    action: 'Stop calling it.',
  },
  payload_too_large: {
    status: 413, retryable: false,
    summary: 'The request body is larger than the endpoint accepts.',
    action: 'Send a smaller body.',
  },
  unsupported_media_type: {
    status: 415, retryable: false,
    summary: 'The body has a Content-Type this endpoint does not parse.',
    action: 'Send JSON with `Content-Type: application/json`.',
  },
  idempotency_key_reused: {
    status: 422, retryable: false,
    summary: 'The Idempotency-Key was already used within 24 hours with a different request body.',
    action: 'Use a new key for a new request.',
  },
  rate_limited: {
    status: 429, retryable: true,
    summary: 'A token-bucket limit was exceeded: per client address (100, then 10 a second), per credential (1000, then 100 a second), per account (5000, then 500 a second), a per-account sub-limit (registering, deleting, purging servers: 100 an hour; rotating keys: 10 an hour), or the failed-password attempts of one e-mail address (10 per 15 minutes).',
    action: 'Wait `retry_after_seconds` (also in the `Retry-After` header) and retry.',
  },
  ingest_too_frequent: {
    status: 429, retryable: true,
    summary: 'A server may push one snapshot per 55 seconds.',
    action: 'Wait `retry_after_seconds` before the next push.',
  },
  internal_error: {
    status: 500, retryable: true,
    summary: 'An unexpected fault on the server. Nothing about it is shown; the request id finds it in the logs.',
    action: 'Retry with backoff; report the request id if it persists.',
  },
  unavailable: {
    status: 503, retryable: true,
    summary: 'The store is temporarily unreachable: PostgreSQL restarting, unreachable or out of connections, or the SQLite file locked by another program for longer than the busy timeout. Nothing of the failed request was stored.',
    action: 'Wait `retry_after_seconds` (also in the `Retry-After` header) and retry the same request; the service recovers by itself when the store is back.',
  },
} as const satisfies Record<string, ErrorCodeInfo>;

export type ErrorCode = keyof typeof ERROR_CODES;
