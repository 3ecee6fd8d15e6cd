import { createRequire } from 'node:module';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import { HOUR_MS, MINUTE_MS, type Clock } from '../../lib/clock.js';

/** The version of this server package, read once: it cannot change while the process runs. */
export const DASHBOARD_VERSION: string = (createRequire(import.meta.url)('../../../package.json') as { version: string }).version;

/** A registry answer is trusted for an hour: agents poll /version often, releases are rare. */
export const LATEST_TTL_MS = HOUR_MS;
/** A failed lookup is remembered for a shorter time, so a registry that is down is not hammered. */
export const FAILURE_TTL_MS = 5 * MINUTE_MS;
export const REGISTRY_TIMEOUT_MS = 3_000;

const SEMVER = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;

/** npm's form of a package name in a URL: `@scope%2fname` (the @ stays, the slash is escaped). */
export function escapePackageName(name: string): string {
  return encodeURIComponent(name).replace(/^%40/, '@').replace(/%2F/g, '%2f');
}

export function distTagsUrl(registryUrl: string, packageName: string): string {
  return `${registryUrl.replace(/\/+$/, '')}/-/package/${escapePackageName(packageName)}/dist-tags`;
}

async function fetchLatest(fetchFn: typeof fetch, url: string, timeoutMs: number): Promise<string> {
  const res = await fetchFn(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs) });
  if (!res.ok) {
    await res.body?.cancel();
    throw new Error(`registry answered ${res.status}`);
  }
  const tags = (await res.json()) as unknown;
  const latest = typeof tags === 'object' && tags !== null ? (tags as Record<string, unknown>).latest : undefined;
  if (typeof latest !== 'string' || latest.length > 64 || !SEMVER.test(latest)) {
    throw new Error('registry answer has no valid latest dist-tag');
  }
  return latest;
}

/**
 * The latest published agent version, from the registry's `latest` dist-tag.
 * The cache lives in this closure (one per app), is timed by the injected
 * clock, and concurrent callers during a lookup share one request. It never
 * fails: on any error it answers the last version the registry gave, or the
 * version bundled with this release when there is none, and logs a warning.
 */
export function agentVersionSource(deps: {
  config: Pick<Config, 'agentRegistryUrl' | 'agentPackage' | 'bundledAgentVersion'>;
  clock: Clock;
  fetch: typeof fetch;
  logger: Logger;
  /** How long one registry request may take (REGISTRY_TIMEOUT_MS unless a test shortens it). */
  timeoutMs?: number;
}) {
  const { config, clock } = deps;
  const url = config.agentRegistryUrl && config.agentPackage ? distTagsUrl(config.agentRegistryUrl, config.agentPackage) : null;
  let cached: { value: string; expiresAt: number } | null = null;
  let lastGood: string | null = null;
  let inFlight: Promise<string> | null = null;

  async function refresh(registryUrl: string): Promise<string> {
    try {
      const latest = await fetchLatest(deps.fetch, registryUrl, deps.timeoutMs ?? REGISTRY_TIMEOUT_MS);
      lastGood = latest;
      cached = { value: latest, expiresAt: clock.now().getTime() + LATEST_TTL_MS };
      return latest;
    } catch (err) {
      // A stale registry answer beats the bundled one: "latest" should not go backwards while the registry is down.
      const fallback = lastGood ?? config.bundledAgentVersion;
      deps.logger.warn(
        { registry: registryUrl, reason: err instanceof Error ? err.message : String(err), fallback },
        'agent registry lookup failed; reporting a fallback agent version',
      );
      cached = { value: fallback, expiresAt: clock.now().getTime() + FAILURE_TTL_MS };
      return fallback;
    }
  }

  return {
    async latest(): Promise<string> {
      if (!url) return config.bundledAgentVersion;
      if (cached && clock.now().getTime() < cached.expiresAt) return cached.value;
      inFlight ??= refresh(url).finally(() => {
        inFlight = null;
      });
      return inFlight;
    },
  };
}

export type AgentVersionSource = ReturnType<typeof agentVersionSource>;
