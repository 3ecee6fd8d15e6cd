import { performance } from 'node:perf_hooks';
import { OutboundError, type OutboundClient, type OutboundResponse } from '../../lib/safe-fetch.js';
import type { Notification } from '../message.js';
import { excerpt } from '../text.js';

/** What one attempt needs besides the channel's config and the notification. */
export interface SendContext {
  /** The delivery id: the same for every attempt of one notification to one channel (the `webhook-id`). */
  deliveryId: string;
  /** The time of this attempt (the service clock). */
  now: Date;
}

/**
 * The outcome of one attempt. `retryable` is the sender's verdict on
 * whether the same message may later get through (timeouts, 408, 429, 5xx,
 * network errors, SMTP 4xx); false on success and on final failures.
 */
export interface SendResult {
  ok: boolean;
  retryable: boolean;
  /** The HTTP status the receiver answered, when it answered over HTTP. */
  httpStatus: number | null;
  /** The SMTP server's reply line (e-mail channels). */
  smtpReply: string | null;
  /** Why it failed, in words a user can act on: status and body excerpt, SMTP reply, DNS or connection error, timeout. */
  error: string | null;
  /** The receiver's Retry-After, in seconds, when it sent one. */
  retryAfterSeconds: number | null;
  durationMs: number;
}

export type Sender<C> = (config: C, notification: Notification, ctx: SendContext) => Promise<SendResult>;

/** Milliseconds since `from` (a performance.now() reading taken before any work, DNS included). */
export function elapsed(from: number): number {
  return Math.round(performance.now() - from);
}

function retryAfter(response: OutboundResponse): number | null {
  const header = response.headers['retry-after'];
  const seconds = typeof header === 'string' ? Number(header) : NaN;
  return Number.isFinite(seconds) && seconds >= 0 ? Math.ceil(seconds) : null;
}

/** 2xx succeeds; 408, 429 and 5xx may succeed later; any other status is final (the request itself is wrong). */
export function httpResult(response: OutboundResponse, from: number): SendResult {
  const { status } = response;
  const ok = status >= 200 && status < 300;
  const retryable = status === 408 || status === 429 || status >= 500;
  let error: string | null = null;
  if (!ok) {
    if (status >= 300 && status < 400) {
      error = `HTTP ${status}: redirects are not followed${response.headers.location ? ` (to ${excerpt(String(response.headers.location), 200)})` : ''}`;
    } else {
      const body = excerpt(response.body);
      error = body ? `HTTP ${status}: ${body}` : `HTTP ${status}`;
    }
  }
  return { ok, retryable, httpStatus: status, smtpReply: null, error, retryAfterSeconds: ok ? null : retryAfter(response), durationMs: elapsed(from) };
}

/** A failure before any answer: refused address, DNS, connection, timeout, or a fault of our own. */
export function failureResult(err: unknown, from: number): SendResult {
  const known = err instanceof OutboundError;
  return {
    ok: false,
    retryable: known ? err.retryable : true,
    httpStatus: null,
    smtpReply: null,
    error: known ? err.message : `delivery failed: ${err instanceof Error ? err.message : String(err)}`,
    retryAfterSeconds: null,
    durationMs: elapsed(from),
  };
}

/** POSTs a JSON body and classifies the answer. */
export async function postJson(
  outbound: OutboundClient,
  request: { url: string; body: unknown; headers?: Record<string, string>; trusted?: boolean },
): Promise<SendResult> {
  const from = performance.now();
  try {
    const response = await outbound.post({
      url: request.url,
      body: typeof request.body === 'string' ? request.body : JSON.stringify(request.body),
      headers: request.headers ?? {},
      trusted: request.trusted,
    });
    return httpResult(response, from);
  } catch (err) {
    return failureResult(err, from);
  }
}
