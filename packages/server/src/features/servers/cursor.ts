import { signedCursor } from '../../http/cursor.js';

/** Where a page ended: the keyset (created_at, id) of its last server. */
export interface PagePosition {
  created_at: string;
  id: string;
}

/** Server list cursors: the signed keyset [created_at, id] of a page's last server. */
export function cursorCodec(secretKey: string) {
  const codec = signedCursor(secretKey, 'cursor',
    (v): v is [string, string] => v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string');
  return {
    encode: (accountId: string, position: PagePosition): string => codec.encode(accountId, [position.created_at, position.id]),
    decode(accountId: string, cursor: string): PagePosition {
      const [created_at, id] = codec.decode(accountId, cursor);
      return { created_at, id };
    },
  };
}

export type CursorCodec = ReturnType<typeof cursorCodec>;
