import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

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

/**
 * Compares secrets, MACs or digests in time independent of where they
 * differ. Both sides are hashed first, so the comparison runs on equal
 * lengths and a length mismatch does not return early either.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = createHash('sha256').update(a).digest();
  const right = createHash('sha256').update(b).digest();
  return timingSafeEqual(left, right);
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

/**
 * AES-256-GCM with a key derived from SECRET_KEY for one purpose. `context`
 * is authenticated, not stored: it binds a sealed value to its row (account,
 * key, channel id), so a value copied into another row does not open.
 * Sealed form: `v1.<iv>.<tag>.<ciphertext>`, each part base64url.
 */
export function sealer(secretKey: string, purpose: string) {
  const key = deriveKey(secretKey, purpose);
  return {
    seal(context: string, text: string): string {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(context));
      const data = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
      return ['v1', iv, cipher.getAuthTag(), data].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.');
    },
    /** The plaintext, or null when the value was sealed under another SECRET_KEY or context, or altered. */
    open(context: string, sealed: string): string | null {
      const [version, iv, tag, data, ...rest] = sealed.split('.');
      if (version !== 'v1' || !iv || !tag || data === undefined || rest.length > 0) return null;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url')).setAAD(Buffer.from(context));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        return null;
      }
    },
  };
}
