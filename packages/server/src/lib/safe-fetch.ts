import { lookup } from 'node:dns/promises';
import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { ipLiteral, refusal } from './address-policy.js';

/**
 * Outbound HTTP for notification channels, built on node:http rather than
 * fetch because the address must be checked and then used: the name is
 * resolved here, every address it has is judged, and the socket connects to
 * the judged address (the lookup hook hands it over), so a DNS answer that
 * changes between check and connect (rebinding) cannot slip past.
 *
 * Redirects are never followed: the 3xx comes back as the answer. A
 * receiver that redirects a POST is misconfigured, and following it would
 * send the alert (and its signature) to a host the user never named.
 */

export const MAX_RESPONSE_BYTES = 64 * 1024;

export interface OutboundRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  /**
   * An endpoint the operator configured (TELEGRAM_API_URL,
   * PAGERDUTY_EVENTS_URL), not one a user typed: its addresses are not
   * judged, so a self-hosted Bot API server on loopback works without
   * opening private targets to every user.
   */
  trusted?: boolean;
}

export interface OutboundResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** At most MAX_RESPONSE_BYTES of the body, as UTF-8 text. */
  body: string;
}

export type OutboundFailure = 'invalid_url' | 'blocked' | 'dns' | 'connection' | 'timeout';

/** Why a request got no HTTP answer; `retryable` says whether the same request may later succeed. */
export class OutboundError extends Error {
  constructor(readonly failure: OutboundFailure, message: string, readonly retryable: boolean) {
    super(message);
  }
}

export interface OutboundClient {
  post(request: OutboundRequest): Promise<OutboundResponse>;
}

export interface OutboundOptions {
  allowPrivateTargets: boolean;
  timeoutMs: number;
  userAgent: string;
}

interface Target {
  address: string;
  family: number;
}

function parse(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundError('invalid_url', 'the URL is not valid', false);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundError('invalid_url', `${url.protocol} URLs are not supported`, false);
  return url;
}

/** Every address of the host, each judged; the connection may use any of them (IPv6 and IPv4 alike). */
async function resolveTargets(hostname: string, options: OutboundOptions, trusted: boolean): Promise<Target[]> {
  const literal = ipLiteral(hostname);
  const addresses = literal
    ? [{ address: literal, family: isIP(literal) }]
    : await lookup(hostname, { all: true, verbatim: true }).catch((err: NodeJS.ErrnoException) => {
      throw new OutboundError('dns', `DNS lookup of ${hostname} failed (${err.code ?? err.message})`, true);
    });
  if (addresses.length === 0) throw new OutboundError('dns', `DNS lookup of ${hostname} returned no address`, true);
  if (!trusted) {
    // Every address is judged, not just the first: a name with one public and one private address is refused.
    for (const { address } of addresses) {
      const why = refusal(address, options.allowPrivateTargets);
      if (why) throw new OutboundError('blocked', literal ? why : `${hostname} resolves to ${why}`, false);
    }
  }
  return addresses;
}

function connectionFailure(err: NodeJS.ErrnoException, url: URL): OutboundError {
  const code = err.code ?? 'error';
  const where = url.host;
  if (code === 'ECONNREFUSED') return new OutboundError('connection', `connection refused by ${where} (ECONNREFUSED)`, true);
  if (/CERT|SSL|TLS|SELF_SIGNED/i.test(code)) return new OutboundError('connection', `TLS handshake with ${where} failed (${code}: ${err.message})`, true);
  return new OutboundError('connection', `connection to ${where} failed (${code})`, true);
}

/** Reads at most `limit` bytes of a response, then lets the rest go unread. */
function collect(res: http.IncomingMessage, limit: number, done: (body: string) => void, fail: (err: Error) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    done(Buffer.concat(chunks).toString('utf8'));
  };
  res.on('data', (chunk: Buffer) => {
    if (finished) return;
    const room = limit - size;
    chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
    size += Math.min(chunk.length, room);
    if (size >= limit) {
      finish();
      res.destroy();
    }
  });
  res.on('end', finish);
  res.on('error', (err) => {
    if (!finished) fail(err);
  });
}

export function outboundClient(options: OutboundOptions): OutboundClient {
  return {
    async post(request) {
      const url = parse(request.url);
      return new Promise<OutboundResponse>((resolve, reject) => {
        let settled = false;
        let req: http.ClientRequest | null = null;
        const settle = (action: () => void) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          action();
        };
        const fail = (err: OutboundError) => settle(() => {
          req?.destroy();
          reject(err);
        });
        // One deadline for the whole exchange: DNS, connect, TLS, the answer and its body.
        const timer = setTimeout(() => fail(new OutboundError('timeout', `no complete answer from ${url.host} within ${options.timeoutMs} ms`, true)), options.timeoutMs);

        resolveTargets(url.hostname, options, request.trusted === true).then((targets) => {
          if (settled) return;
          const pinned: LookupFunction = (_hostname, lookupOptions, callback) => {
            if (lookupOptions.all) callback(null, targets);
            else callback(null, targets[0]!.address, targets[0]!.family);
          };
          const transport = url.protocol === 'https:' ? https : http;
          req = transport.request({
            method: 'POST',
            hostname: ipLiteral(url.hostname) ?? url.hostname,
            port: url.port || undefined,
            path: `${url.pathname}${url.search}`,
            headers: {
              'user-agent': options.userAgent,
              'content-type': 'application/json',
              ...request.headers,
              'content-length': String(Buffer.byteLength(request.body)),
            },
            lookup: pinned,
            // A fresh connection per attempt: a pooled socket would outlive the address check that allowed it.
            agent: false,
          });
          req.on('response', (res) => {
            collect(res, MAX_RESPONSE_BYTES,
              (body) => settle(() => resolve({ status: res.statusCode ?? 0, headers: res.headers, body })),
              (err) => fail(connectionFailure(err as NodeJS.ErrnoException, url)));
          });
          req.on('error', (err) => fail(connectionFailure(err as NodeJS.ErrnoException, url)));
          req.end(request.body);
        }, (err: unknown) => fail(err instanceof OutboundError ? err : new OutboundError('dns', String(err), true)));
      });
    },
  };
}
