import { constantTimeEqual, deriveKey, hmacBase64Url } from '../../lib/crypto.js';
import { validationFailed } from '../../http/errors.js';

/** Where a page ended: the keyset (created_at, id) of its last server. */
export interface PagePosition {
  created_at: string;
  id: string;
}

/**
 * Cursors are `<base64url JSON [created_at, id]>.<HMAC>`. The MAC covers the
 * account too, so a cursor is opaque in practice: a forged, corrupted or
 * other account's cursor is refused instead of steering the query.
 */
export function cursorCodec(secretKey: string) {
  const key = deriveKey(secretKey, 'cursor');
  const mac = (accountId: string, payload: string) => hmacBase64Url(key, `${accountId}.${payload}`);
  const invalid = () => validationFailed('cursor', 'is not a cursor returned by this endpoint; pass next_cursor unchanged');

  return {
    encode(accountId: string, position: PagePosition): string {
      const payload = Buffer.from(JSON.stringify([position.created_at, position.id])).toString('base64url');
      return `${payload}.${mac(accountId, payload)}`;
    },

    decode(accountId: string, cursor: string): PagePosition {
      const [payload, signature, ...rest] = cursor.split('.');
      if (!payload || !signature || rest.length > 0 || !constantTimeEqual(signature, mac(accountId, payload))) throw invalid();
      let value: unknown;
      try {
        value = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      } catch {
        throw invalid();
      }
      if (!Array.isArray(value) || value.length !== 2 || typeof value[0] !== 'string' || typeof value[1] !== 'string') throw invalid();
      return { created_at: value[0], id: value[1] };
    },
  };
}

export type CursorCodec = ReturnType<typeof cursorCodec>;
