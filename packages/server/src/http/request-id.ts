import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const WELL_FORMED = /^[A-Za-z0-9._:-]{8,128}$/;

/** Keeps a caller's well-formed X-Request-Id (so traces join up); otherwise makes one. */
export function requestIdFor(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  if (typeof incoming === 'string' && WELL_FORMED.test(incoming)) return incoming;
  return `req_${randomBytes(12).toString('base64url')}`;
}
