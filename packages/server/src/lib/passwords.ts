import argon2 from 'argon2';

/** argon2id with OWASP's recommended floor (19 MiB, 2 passes, 1 lane). */
const OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, OPTIONS);
}

export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  try {
    return await argon2.verify(hash, password);
  } catch {
    return false;
  }
}

let dummyHash: Promise<string> | undefined;

/** Computes the throw-away hash ahead of the first login, so even that one is not slower. */
export function prepareDummyHash(): void {
  dummyHash ??= hashPassword('kiln-dummy-password-for-timing');
}

/**
 * Verifying against a throw-away hash of the same cost lets a login with an
 * unknown e-mail take as long as one with a wrong password.
 */
export async function burnPasswordCheck(password: string): Promise<false> {
  prepareDummyHash();
  await verifyPassword(await dummyHash!, password);
  return false;
}
