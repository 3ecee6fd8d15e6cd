import type { FastifyInstance, FastifyReply } from 'fastify';

/**
 * The policy of every response that does not bring its own: nothing it holds
 * may load, run or be framed. API answers are JSON, so this costs them
 * nothing and disarms one rendered by a browser. The HTML pages send their
 * own, equally closed, policy (features/meta/html.ts).
 */
export const DEFAULT_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** One year, without includeSubDomains: a self-hosted instance does not decide for names beside it. */
const HSTS = 'max-age=31536000';

export function securityHeaders(publicUrl: string | null): Record<string, string> {
  return {
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'Cross-Origin-Opener-Policy': 'same-origin',
    ...(publicUrl?.startsWith('https:') ? { 'Strict-Transport-Security': HSTS } : {}),
  };
}

export function applySecurityHeaders(reply: FastifyReply, headers: Record<string, string>): void {
  reply.headers(headers);
  if (!reply.hasHeader('content-security-policy')) reply.header('Content-Security-Policy', DEFAULT_CSP);
}

/** On send, so errors, 404s, 429s and replies from any hook get them as well as route answers. */
export function registerSecurityHeaders(app: FastifyInstance, publicUrl: string | null): void {
  const headers = securityHeaders(publicUrl);
  app.addHook('onSend', (_request, reply, payload, done) => {
    applySecurityHeaders(reply, headers);
    done(null, payload);
  });
}
