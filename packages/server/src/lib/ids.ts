import { randomBytes } from 'node:crypto';

export type IdPrefix = 'usr' | 'acc' | 'srv' | 'alt' | 'chn' | 'key' | 'dlv' | 'ses';

/** `<prefix>_` followed by 20 URL-safe random characters (120 bits). */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBytes(15).toString('base64url')}`;
}

/** Collector keys: `col_` + 40 lowercase hex characters, the shape real agents check. */
export function newCollectorKey(): string {
  return `col_${randomBytes(20).toString('hex')}`;
}

/** Account keys: `mk_` + 43 URL-safe characters (256 bits). */
export function newAccountKeySecret(): string {
  return `mk_${randomBytes(32).toString('base64url')}`;
}

/** Opaque single-use tokens (e-mail verification). */
export function newOpaqueToken(): string {
  return randomBytes(32).toString('base64url');
}
