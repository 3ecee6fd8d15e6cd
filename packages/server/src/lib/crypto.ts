import { createHash, createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/** Credentials are stored as SHA-256 digests: they are high-entropy, so a fast hash is enough. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** Derives an independent 32-byte key for one purpose from the service's SECRET_KEY. */
export function deriveKey(secretKey: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secretKey, 'kiln', purpose, 32));
}

export function hmacBase64Url(key: Buffer, value: string): string {
  return createHmac('sha256', key).update(value).digest('base64url');
}

export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** JSON with object keys sorted, so equal payloads hash equally whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
