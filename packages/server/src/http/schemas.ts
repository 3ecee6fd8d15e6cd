import { Type, type TSchema } from '@sinclair/typebox';
import { ERROR_CODES } from './error-codes.js';

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601, UTC' });
export const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

/**
 * Text a person typed: no control characters (C0, DEL, C1: they break logs,
 * headers and terminals) and no lone UTF-16 surrogate (the store would keep
 * U+FFFD instead, so the text would not read back as sent). Ajv compiles
 * patterns with the `u` flag, so a surrogate pair (an emoji) is one
 * character outside the class.
 */
export const PLAIN_TEXT = '^[^\\u0000-\\u001F\\u007F-\\u009F\\uD800-\\uDFFF]*$';

/** Ids are `<prefix>_` and URL-safe characters; anything else cannot name a resource. */
export const ID_PATTERN = '^[A-Za-z0-9_-]+$';

export const ErrorEnvelope = Type.Object({
  error: Type.Union(Object.keys(ERROR_CODES).map((code) => Type.Literal(code))),
  message: Type.String(),
  request_id: Type.String(),
  documentation_url: Type.String(),
  retryable: Type.Boolean(),
  retry_after_seconds: Type.Union([Type.Integer(), Type.Null()]),
  details: Type.Array(
    Type.Object({ field: Type.String(), issue: Type.String(), value: Type.Optional(Type.Unknown()) }),
  ),
}, { description: 'Every 4xx/5xx answer' });

/** Response map of a route: its success shapes plus the error envelope for every failure. */
export function responses<T extends Record<number, TSchema>>(ok: T) {
  return { ...ok, '4xx': ErrorEnvelope, '5xx': ErrorEnvelope };
}

export const NoContent = Type.Null({ description: 'No content' });

export const IdParams = <K extends string>(name: K) =>
  Type.Object({ [name]: Type.String({ minLength: 1, maxLength: 64, pattern: ID_PATTERN }) } as Record<K, ReturnType<typeof Type.String>>);
