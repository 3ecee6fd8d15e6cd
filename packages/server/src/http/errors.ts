import { ERROR_CODES, type ErrorCode } from './error-codes.js';
import { STORE_RETRY_AFTER_SECONDS } from '../store/errors.js';

export interface ErrorDetail {
  /** JSON pointer into the body (`/tags/3`) or a parameter name. */
  field: string;
  issue: string;
  value?: unknown;
}

/** The one error type of the service; the error handler turns it into the envelope. */
export class ApiError extends Error {
  readonly status: number;
  readonly retryable: boolean;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetail[] = [],
    readonly retryAfterSeconds: number | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = ERROR_CODES[code].status;
    this.retryable = ERROR_CODES[code].retryable;
  }
}

export function validationFailed(field: string, issue: string, value?: unknown): ApiError {
  const detail: ErrorDetail = value === undefined ? { field, issue } : { field, issue, value };
  return new ApiError('validation_failed', `${field}: ${issue}`, [detail]);
}

export function notFound(what: string): ApiError {
  return new ApiError('not_found', `${what} not found`);
}

/** 503 `unavailable`: the store cannot be reached for now; says when to retry, and nothing about the store. */
export function storeUnavailable(): ApiError {
  return new ApiError('unavailable', `the service cannot reach its store right now; retry in ${STORE_RETRY_AFTER_SECONDS} seconds`, [], STORE_RETRY_AFTER_SECONDS);
}
