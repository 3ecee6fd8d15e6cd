import type { Static } from '@sinclair/typebox';
import { iso, type Clock } from '../../lib/clock.js';
import { sha256Hex } from '../../lib/crypto.js';
import { newCollectorKey, newId } from '../../lib/ids.js';
import type { Principal } from '../../http/auth.js';
import { ApiError, notFound, validationFailed } from '../../http/errors.js';
import { silencedTypes } from '../../rules/profiles.js';
import { checkConfigOverrides } from '../alerts/overrides.js';
import type { KeysService } from '../keys/service.js';
import type { CursorCodec } from './cursor.js';
import { hardwareSummary } from './hardware.js';
import { NEVER_REPORTED_GRACE_MS, type ServerChanges, type ServerRow, type ServersRepo, type Silencing } from './repo.js';
import { checkHostname, checkName, checkProfile, checkTags, isHostname, placeholderName } from './rules.js';
import type { ConfigOverridesBody, ListServersQuery, RegisterServerBody, UpdateServerBody } from './schemas.js';
import { serverListItem, serverView, trashedServerView } from './views.js';

export const DEFAULT_PAGE_SIZE = 100;
/** The one suspension reason that restore-all reverses (historical billing enforcement). */
export const NO_CARD_ON_FILE = 'no_card_on_file';

function confirmed(confirm: string | undefined): void {
  if (confirm !== 'true') {
    throw new ApiError('confirmation_required', 'this is destructive: repeat the request with the query parameter confirm=true');
  }
}

export function serversService(deps: { repo: ServersRepo; clock: Clock; cursors: CursorCodec; keys: Pick<KeysService, 'recentlyReauthenticated'> }) {
  const { repo, clock, cursors } = deps;

  async function live(accountId: string, serverId: string): Promise<ServerRow> {
    const row = await repo.findLive(accountId, serverId);
    if (!row) throw notFound('server');
    return row;
  }

  async function alertCounts(rows: readonly ServerRow[]): Promise<(row: ServerRow) => number> {
    const counts = await repo.activeAlertCounts(rows.map((row) => row.id));
    return (row) => counts.get(row.id) ?? 0;
  }

  /** The full server view; its hardware comes from the latest snapshot. */
  async function fullView(accountId: string, serverId: string) {
    const row = await live(accountId, serverId);
    const [snapshot, count] = await Promise.all([repo.latestSnapshot(row.id), alertCounts([row])]);
    return serverView(row, hardwareSummary(snapshot), count(row));
  }

  return {
    async register(accountId: string, body: Static<typeof RegisterServerBody>, origin: string) {
      const name = body.name === undefined ? null : checkName(body.name);
      // An explicit hostname wins; else a user-chosen name that is a hostname; else the first snapshot fills it.
      const hostname = body.hostname !== undefined ? checkHostname(body.hostname) : name && isHostname(name) ? name.toLowerCase() : null;
      const tags = checkTags(body.tags ?? []);
      const profile = checkProfile(body.profile ?? null);
      const collectorKey = newCollectorKey();
      const server = { id: newId('srv'), name: name ?? placeholderName(), hostname, tags };
      const now = clock.now();
      await repo.insert({
        ...server,
        account_id: accountId,
        name_is_placeholder: name === null ? 1 : 0,
        tags: JSON.stringify(tags),
        profile,
        status: 'active',
        disk_health_rollup: 'healthy',
        config_overrides: '{}',
        free_analysis_used: 0,
        collector_key_hash: sha256Hex(collectorKey),
        created_at: iso(now),
        unreachable_at_ms: now.getTime() + NEVER_REPORTED_GRACE_MS,
      }, tags);
      return {
        success: true as const,
        server: { ...server, api_key: collectorKey },
        ingest_url: `${origin}/api/v1/ingest`,
        message: 'Server registered. Configure the agent with api_key as its collector key; it is shown only this once.',
      };
    },

    async list(accountId: string, query: Static<typeof ListServersQuery>) {
      const limit = query.limit ?? DEFAULT_PAGE_SIZE;
      const tags = [...new Set((query.tag ?? []).map((tag) => tag.trim()))];
      const after = query.cursor === undefined ? null : cursors.decode(accountId, query.cursor);
      // One row beyond the page tells whether another page exists without a count query.
      const rows = await repo.page(accountId, { tags, after, limit: limit + 1 });
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      const count = await alertCounts(page);
      return {
        servers: page.map((row) => serverListItem(row, count(row))),
        next_cursor: rows.length > limit && last ? cursors.encode(accountId, last) : null,
      };
    },

    async get(accountId: string, serverId: string) {
      return fullView(accountId, serverId);
    },

    async update(accountId: string, serverId: string, body: Static<typeof UpdateServerBody>) {
      if (body.hostname !== undefined) {
        throw validationFailed('/hostname', 'cannot be changed after registration');
      }
      const changes: ServerChanges = {};
      if (body.name !== undefined) {
        changes.name = checkName(body.name);
        changes.name_is_placeholder = 0;
      }
      const tags = body.tags === undefined ? undefined : checkTags(body.tags);
      let silence: Silencing | undefined;
      if (body.profile !== undefined) {
        changes.profile = checkProfile(body.profile);
        // Setting a profile resolves the active alerts it silences; clearing it resolves nothing (the next snapshot raises again).
        if (changes.profile !== null) silence = { types: [...silencedTypes(changes.profile)], now: iso(clock.now()) };
      }
      if (!(await repo.update(accountId, serverId, changes, tags, silence))) throw notFound('server');
      return fullView(accountId, serverId);
    },

    /** PUT /servers/:id/config-overrides: replaces the thresholds and push interval, checked against the alert catalog. */
    async replaceConfigOverrides(accountId: string, serverId: string, body: Static<typeof ConfigOverridesBody>) {
      const overrides = checkConfigOverrides(body);
      if (!(await repo.replaceConfigOverrides(accountId, serverId, JSON.stringify(overrides), overrides.interval_seconds ?? null))) {
        throw notFound('server');
      }
      return fullView(accountId, serverId);
    },

    async trash(accountId: string, serverId: string, confirm: string | undefined) {
      await live(accountId, serverId);
      confirmed(confirm);
      const trashedAt = iso(clock.now());
      if (!(await repo.trash(accountId, serverId, trashedAt))) throw notFound('server');
      return { success: true as const, id: serverId, trashed_at: trashedAt, permanent: false as const, restorable: true as const };
    },

    async listTrashed(accountId: string) {
      const rows = await repo.listTrashed(accountId);
      const count = await alertCounts(rows);
      return { servers: rows.map((row) => trashedServerView(row, count(row))) };
    },

    async restore(accountId: string, serverId: string) {
      const row = await repo.findAny(accountId, serverId);
      if (!row) throw notFound('server');
      if (!(await repo.restore(accountId, serverId, clock.now().getTime()))) {
        throw new ApiError('not_restorable', 'the server is neither trashed nor suspended');
      }
      return { success: true as const, server: await fullView(accountId, serverId) };
    },

    async restoreAll(accountId: string) {
      const ids = await repo.restoreSuspended(accountId, NO_CARD_ON_FILE, clock.now().getTime());
      return { success: true as const, restored: ids.length, server_ids: ids };
    },

    /** Permanent destruction; the checks run in the contract's order so each failure names the first unmet condition. */
    async purge(principal: Principal, serverId: string, confirm: string | undefined) {
      const row = await repo.findAny(principal.accountId, serverId);
      if (!row) throw notFound('server');
      if (row.trashed_at === null) {
        throw new ApiError('not_trashed', 'only a server in the trash can be purged; DELETE /api/v1/servers/:id?confirm=true first');
      }
      confirmed(confirm);
      if (!(await deps.keys.recentlyReauthenticated(principal))) {
        throw new ApiError('reauth_required', 'confirm your password with POST /api/v1/account/verify-password using this same key, then repeat within 5 minutes');
      }
      if (!(await repo.purge(principal.accountId, serverId))) throw notFound('server');
      return { success: true as const, id: serverId, purged: true as const, permanent: true as const };
    },

    async rotateKey(accountId: string, serverId: string) {
      const collectorKey = newCollectorKey();
      const rotatedAt = iso(clock.now());
      if (!(await repo.rotateKey(accountId, serverId, sha256Hex(collectorKey), rotatedAt))) throw notFound('server');
      return {
        success: true as const,
        server: { id: serverId },
        collector_key: collectorKey,
        rotated_at: rotatedAt,
        message: 'The previous collector key no longer works. Put this key in the agent configuration and restart the agent.',
      };
    },
  };
}

export type ServersService = ReturnType<typeof serversService>;
