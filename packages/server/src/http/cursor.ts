import { constantTimeEqual, deriveKey, hmacBase64Url } from '../lib/crypto.js';
import { validationFailed } from './errors.js';

export type CursorValues = ReadonlyArray<string | number>;

/**
 * Keyset cursors: `<base64url JSON array>.<HMAC>`. The MAC covers the
 * account too, so a cursor is opaque in practice: a forged, corrupted or
 * other account's cursor is refused (400 at `cursor`) instead of steering
 * the query. `purpose` keeps the cursors of different lists apart.
 */
export function signedCursor<T extends CursorValues>(secretKey: string, purpose: string, isPosition: (values: unknown[]) => values is unknown[] & T) {
  const key = deriveKey(secretKey, purpose);
  const mac = (accountId: string, payload: string) => hmacBase64Url(key, `${accountId}.${payload}`);
  const invalid = () => validationFailed('cursor', 'is not a cursor returned by this endpoint; pass next_cursor unchanged');

  return {
    encode(accountId: string, position: T): string {
      const payload = Buffer.from(JSON.stringify(position)).toString('base64url');
      return `${payload}.${mac(accountId, payload)}`;
    },

    decode(accountId: string, cursor: string): T {
      const [payload, signature, ...rest] = cursor.split('.');
      if (!payload || !signature || rest.length > 0 || !constantTimeEqual(signature, mac(accountId, payload))) throw invalid();
      let value: unknown;
      try {
        value = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      } catch {
        throw invalid();
      }
      if (!Array.isArray(value) || !isPosition(value)) throw invalid();
      return value;
    },
  };
}
