import { serversRepo } from '../../src/features/servers/repo.js';
import { PASSWORD, api, createKey, registerUser, type TestApp, type TestUser } from './app.js';

export interface RegisteredServer {
  id: string;
  name: string;
  hostname: string | null;
  tags: string[];
  api_key: string;
}

/** Registers a server through the API and returns the `server` part of the 201 answer. */
export async function createServer(t: TestApp, token: string, body: Record<string, unknown> = {}): Promise<RegisteredServer> {
  const res = await api(t, 'POST', '/api/v1/servers', { token, body });
  if (res.status !== 201) throw new Error(`server registration failed: ${res.status} ${res.raw}`);
  return res.body.server;
}

/** Puts a server into the historical `suspended` state; no endpoint does that any more. */
export async function suspendServer(t: TestApp, accountOf: TestUser, serverId: string, reason = 'no_card_on_file'): Promise<void> {
  const accountId = await accountIdOf(t, accountOf);
  const ok = await serversRepo(t.store.db).suspend(accountId, serverId, t.clock.now().toISOString(), reason);
  if (!ok) throw new Error(`no server ${serverId} to suspend`);
}

export async function accountIdOf(t: TestApp, user: TestUser): Promise<string> {
  const row = await t.store.db.selectFrom('users').select('account_id').where('id', '=', user.user.id).executeTakeFirstOrThrow();
  return row.account_id;
}

/** A user with a purge-capable write key that has just re-authenticated. */
export async function purger(t: TestApp): Promise<{ owner: TestUser; key: string }> {
  const owner = await registerUser(t);
  const { secret } = await createKey(t, owner.token, ['write'], ['servers:purge']);
  const verified = await api(t, 'POST', '/api/v1/account/verify-password', { token: secret, body: { password: PASSWORD } });
  if (verified.status !== 200) throw new Error(`verify-password failed: ${verified.status} ${verified.raw}`);
  return { owner, key: secret };
}

export async function trashServer(t: TestApp, token: string, serverId: string): Promise<void> {
  const res = await api(t, 'DELETE', `/api/v1/servers/${serverId}?confirm=true`, { token });
  if (res.status !== 200) throw new Error(`trash failed: ${res.status} ${res.raw}`);
}
