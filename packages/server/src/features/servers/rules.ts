import { randomInt } from 'node:crypto';
import { ApiError, validationFailed } from '../../http/errors.js';
import { HOST_PROFILES, type HostProfileId } from '../../rules/profiles.js';

/**
 * The field rules of registration and update. The schema checks types; these
 * check what needs trimming or exact messages first, so every rule reports
 * the same JSON pointer however it fails.
 */
export const NAME_MAX_CHARS = 100;
export const TAG_MAX_CHARS = 50;
export const TAGS_MAX = 20;
export const HOSTNAME_MAX_CHARS = 253;
/** Host profile ids; the profiles themselves (and what they silence) live with the alert rules. */
export const PROFILES: readonly HostProfileId[] = HOST_PROFILES.map((p) => p.id);
export type Profile = HostProfileId;

// C0 and C1 control characters: they break logs, terminals and notification bodies.
const CONTROL = /\p{Cc}/u;
// A lone UTF-16 surrogate (JSON allows "\ud800"): the store would keep U+FFFD, not what was sent.
const LONE_SURROGATE = /\p{Cs}/u;
// RFC 1035 label: a letter first, a letter or digit last, letters, digits and hyphens between.
const LABEL = /^[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
const PLACEHOLDER_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** Length in characters (code points), the unit Ajv's maxLength uses too: "é" and "😀" count once. */
export function charCount(value: string): number {
  return [...value].length;
}

/** Trimmed text of 1..max characters without control characters, or 400 at `field`. */
export function plainText(value: string, field: string, max: number): string {
  // Checked before trimming: a trailing newline is a control character, not whitespace to forgive.
  if (CONTROL.test(value)) throw validationFailed(field, 'must not contain control characters');
  if (LONE_SURROGATE.test(value)) throw validationFailed(field, 'must be valid Unicode text (it holds a lone surrogate)');
  const text = value.trim();
  if (text.length === 0) throw validationFailed(field, 'must not be empty or only whitespace');
  if (charCount(text) > max) throw validationFailed(field, `must be at most ${max} characters`);
  return text;
}

export function checkName(value: string): string {
  return plainText(value, '/name', NAME_MAX_CHARS);
}

/** Trimmed, de-duplicated (first occurrence wins) tags; each error points at its index. The schema caps the count. */
export function checkTags(values: string[]): string[] {
  const tags: string[] = [];
  values.forEach((value, index) => {
    const tag = plainText(value, `/tags/${index}`, TAG_MAX_CHARS);
    if (!tags.includes(tag)) tags.push(tag);
  });
  return tags;
}

export function isHostname(value: string): boolean {
  return value.length <= HOSTNAME_MAX_CHARS && value.split('.').every((label) => LABEL.test(label));
}

/** A valid RFC 1035 hostname, lowercased; no trimming, since a hostname has no spaces to forgive. */
export function checkHostname(value: string): string {
  if (!isHostname(value)) {
    throw validationFailed('/hostname', 'must be an RFC 1035 hostname: dot-separated labels of 1-63 letters, digits and hyphens, each starting with a letter and ending with a letter or digit, at most 253 characters');
  }
  return value.toLowerCase();
}

export function checkProfile(value: string | null): Profile | null {
  if (value === null) return null;
  if ((PROFILES as readonly string[]).includes(value)) return value as Profile;
  const issue = `must be null or one of: ${PROFILES.join(', ')}`;
  // The message's wording is part of the spec: clients match its beginning.
  throw new ApiError('validation_failed', `profile ${issue}`, [
    value.length <= 100 ? { field: '/profile', issue, value } : { field: '/profile', issue },
  ]);
}

/** `pending-` and 6 lowercase letters or digits; the first snapshot's hostname replaces it. */
export function placeholderName(): string {
  let suffix = '';
  for (let i = 0; i < 6; i++) suffix += PLACEHOLDER_ALPHABET[randomInt(PLACEHOLDER_ALPHABET.length)];
  return `pending-${suffix}`;
}
