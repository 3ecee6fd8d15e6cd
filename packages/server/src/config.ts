import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { parseTrustProxy, type TrustProxySetting } from './http/client-ip.js';
import { parseTierOverrides, type Tiers } from './http/rate-limit/tiers.js';

/** The one typed configuration object; everything else receives it, nothing reads process.env. */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | null;
  /**
   * How long a SQLite write waits for a lock another connection holds before
   * it fails (503 `unavailable`). better-sqlite3 waits on the event loop's
   * thread, so the whole process waits with it.
   */
  sqliteBusyTimeoutMs: number;
  redisUrl: string | null;
  publicUrl: string | null;
  secretKey: string;
  smtpUrl: string | null;
  mailFrom: string;
  /** Whose address the per-IP tier counts: see http/client-ip.ts. */
  trustProxy: TrustProxySetting;
  /** Origins allowed cross-origin access (`*` for any); empty: CORS off. */
  corsOrigins: string[];
  /** The request tiers can be switched off (a gateway in front limits already); the password budget cannot. */
  rateLimits: { enabled: boolean; tiers: Tiers };
  logLevel: string;
  agentRegistryUrl: string | null;
  agentPackage: string | null;
  agentChangelogUrl: string | null;
  minAgentVersion: string;
  bundledAgentVersion: string;
  /** How long metric history is kept, per resolution (days). */
  retention: { rawDays: number; fiveMinuteDays: number; hourDays: number; dayDays: number };
  /** Notification channels: where the third-party APIs are and what outbound requests may do. */
  delivery: DeliveryConfig;
}

export interface DeliveryConfig {
  /** Let channels reach loopback, private and CGNAT addresses; link-local (cloud metadata) stays refused. */
  allowPrivateTargets: boolean;
  /** Origin of the Telegram Bot API; requests go to `<it>/bot<token>/sendMessage`. */
  telegramApiUrl: string;
  /** The Events API v2 enqueue URL. */
  pagerdutyEventsUrl: string;
  /** How long one delivery attempt may take, connection and answer included. */
  timeoutMs: number;
}

export const DEFAULT_TELEGRAM_API_URL = 'https://api.telegram.org';
export const DEFAULT_PAGERDUTY_EVENTS_URL = 'https://events.pagerduty.com/v2/enqueue';

export class ConfigError extends Error {}

/** The agent version shipped with this release; used when no registry is configured or it fails. */
export const BUNDLED_AGENT_VERSION = '0.10.1';

type Env = Record<string, string | undefined>;

function str(env: Env, name: string): string | null {
  const value = env[name]?.trim();
  return value ? value : null;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const value = str(env, name);
  if (value === null) return fallback;
  if (/^(1|true|yes|on)$/i.test(value)) return true;
  if (/^(0|false|no|off)$/i.test(value)) return false;
  throw new ConfigError(`${name} must be true or false, got "${value}"`);
}

function port(env: Env): number {
  const value = str(env, 'PORT') ?? '8080';
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65_535) throw new ConfigError(`PORT must be 0-65535, got "${value}"`);
  return n;
}

function days(env: Env, name: string, fallback: number): number {
  const value = str(env, name);
  if (value === null) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 36_500) throw new ConfigError(`${name} must be a whole number of days (1-36500), got "${value}"`);
  return n;
}

function url(env: Env, name: string, protocols: string[]): string | null {
  const value = str(env, name);
  if (value === null) return null;
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new ConfigError(`${name} is not a URL`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')}`);
  }
  return value.replace(/\/+$/, '');
}

function millis(env: Env, name: string, fallback: number): number {
  const value = str(env, name);
  if (value === null) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 100 || n > 120_000) throw new ConfigError(`${name} must be a whole number of milliseconds (100-120000), got "${value}"`);
  return n;
}

/** Milliseconds from 0 (fail at once) up to `max`. */
function waitMs(env: Env, name: string, fallback: number, max: number): number {
  const value = str(env, name);
  if (value === null) return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n > max) throw new ConfigError(`${name} must be a whole number of milliseconds (0-${max}), got "${value}"`);
  return n;
}

function trustProxy(env: Env): TrustProxySetting {
  const value = str(env, 'TRUST_PROXY');
  if (value === null) return false;
  const parsed = parseTrustProxy(value);
  if (parsed === null) throw new ConfigError(`TRUST_PROXY must be true, false, a number of proxy hops, or proxy addresses/CIDRs separated by commas, got "${value}"`);
  return parsed;
}

function corsOrigins(env: Env): string[] {
  const value = str(env, 'CORS_ORIGINS');
  if (value === null) return [];
  return value.split(',').map((entry) => entry.trim()).filter(Boolean).map((entry) => {
    if (entry === '*') return entry;
    let origin: string | null = null;
    try {
      origin = new URL(entry).origin;
    } catch {
      // reported below
    }
    if (!origin || origin === 'null' || origin !== entry.replace(/\/$/, '')) {
      throw new ConfigError(`CORS_ORIGINS entries must be * or origins like https://app.example.com (scheme, host, optional port), got "${entry}"`);
    }
    return origin;
  });
}

function tiers(env: Env): Tiers {
  try {
    return parseTierOverrides(str(env, 'RATE_LIMITS'));
  } catch (err) {
    throw new ConfigError(`RATE_LIMITS: ${(err as Error).message}`);
  }
}

function semver(env: Env, name: string, fallback: string): string {
  const value = str(env, name) ?? fallback;
  if (!/^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$/.test(value)) throw new ConfigError(`${name} must be a version like 1.2.3`);
  return value;
}

/**
 * SECRET_KEY signs session tokens and derives the encryption key of channel
 * secrets. When it is not set, one is generated once and kept in DATA_DIR so
 * sessions survive restarts.
 */
export function loadSecretKey(env: Env, dataDir: string): string {
  const given = str(env, 'SECRET_KEY');
  if (given !== null) {
    if (given.length < 32) throw new ConfigError('SECRET_KEY must be at least 32 characters');
    return given;
  }
  const file = join(dataDir, 'secret.key');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32).toString('base64url');
  writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  return key;
}

export function loadConfig(env: Env = process.env): Config {
  const dataDir = resolve(str(env, 'DATA_DIR') ?? './data');
  return {
    port: port(env),
    host: str(env, 'HOST') ?? '127.0.0.1',
    dataDir,
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    sqliteBusyTimeoutMs: waitMs(env, 'SQLITE_BUSY_TIMEOUT_MS', 5_000, 60_000),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    publicUrl: url(env, 'PUBLIC_URL', ['http:', 'https:']),
    secretKey: loadSecretKey(env, dataDir),
    smtpUrl: url(env, 'SMTP_URL', ['smtp:', 'smtps:']),
    mailFrom: str(env, 'MAIL_FROM') ?? 'Kiln <kiln@localhost>',
    trustProxy: trustProxy(env),
    corsOrigins: corsOrigins(env),
    rateLimits: { enabled: bool(env, 'RATE_LIMITS_ENABLED', true), tiers: tiers(env) },
    logLevel: str(env, 'LOG_LEVEL') ?? 'info',
    agentRegistryUrl: url(env, 'AGENT_REGISTRY_URL', ['http:', 'https:']),
    agentPackage: str(env, 'AGENT_PACKAGE'),
    agentChangelogUrl: url(env, 'AGENT_CHANGELOG_URL', ['http:', 'https:']),
    minAgentVersion: semver(env, 'MIN_AGENT_VERSION', '0.1.0'),
    bundledAgentVersion: BUNDLED_AGENT_VERSION,
    retention: {
      rawDays: days(env, 'RETENTION_RAW_DAYS', 7),
      fiveMinuteDays: days(env, 'RETENTION_5M_DAYS', 30),
      hourDays: days(env, 'RETENTION_1H_DAYS', 400),
      dayDays: days(env, 'RETENTION_1D_DAYS', 1825),
    },
    delivery: {
      allowPrivateTargets: bool(env, 'ALLOW_PRIVATE_TARGETS', false),
      telegramApiUrl: url(env, 'TELEGRAM_API_URL', ['http:', 'https:']) ?? DEFAULT_TELEGRAM_API_URL,
      pagerdutyEventsUrl: url(env, 'PAGERDUTY_EVENTS_URL', ['http:', 'https:']) ?? DEFAULT_PAGERDUTY_EVENTS_URL,
      timeoutMs: millis(env, 'DELIVERY_TIMEOUT_MS', 10_000),
    },
  };
}
