import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/auth.js';
import { originOf } from '../../http/errors-plugin.js';
import { IdParams, responses } from '../../http/schemas.js';
import type { FeatureDeps } from '../deps.js';
import { cursorCodec } from './cursor.js';
import { serversRepo } from './repo.js';
import {
  ConfigOverridesBody, ConfirmQuery, ListServersQuery, ListServersResponse, ListTrashedResponse, PurgeResponse, RegisterServerBody,
  RegisterServerResponse, RestoreAllResponse, RestoreResponse, RotateKeyResponse, Server, TrashResponse, UpdateServerBody,
} from './schemas.js';
import { serversService } from './service.js';

const params = IdParams('server_id');

export const serversRoutes: FastifyPluginAsyncTypebox<FeatureDeps> = async (app, deps) => {
  const servers = serversService({
    repo: serversRepo(deps.store.db),
    clock: deps.clock,
    cursors: cursorCodec(deps.config.secretKey),
    keys: deps.keys,
  });
  const tags = ['Servers'];

  app.post('/servers', {
    config: { scope: 'write', idempotent: true, rateLimit: 'server-create' },
    schema: { tags, summary: 'Register a server; returns its collector key once', body: RegisterServerBody, response: responses({ 201: RegisterServerResponse }) },
    // Every field is optional, so a POST without any body registers a server with defaults.
    preValidation: async (request) => {
      (request as { body: unknown }).body ??= {};
    },
  }, async (request, reply) => reply.code(201).send(
    await servers.register(principalOf(request).accountId, request.body, originOf(request, deps.config.publicUrl)),
  ));

  app.get('/servers', {
    schema: { tags, summary: 'List servers, oldest first, one page at a time', querystring: ListServersQuery, response: responses({ 200: ListServersResponse }) },
  }, async (request) => servers.list(principalOf(request).accountId, request.query));

  // Static before parametric: find-my-way matches /servers/restore-all here, never as a server id.
  app.post('/servers/restore-all', {
    config: { scope: 'write' },
    schema: { tags, summary: 'Restore every server suspended for no_card_on_file', response: responses({ 200: RestoreAllResponse }) },
  }, async (request) => servers.restoreAll(principalOf(request).accountId));

  app.get('/servers/:server_id', {
    schema: { tags, summary: 'One server', params, response: responses({ 200: Server }) },
  }, async (request) => servers.get(principalOf(request).accountId, request.params.server_id));

  app.patch('/servers/:server_id', {
    config: { scope: 'write' },
    schema: { tags, summary: 'Change name, tags or profile (hostname is fixed)', params, body: UpdateServerBody, response: responses({ 200: Server }) },
  }, async (request) => servers.update(principalOf(request).accountId, request.params.server_id, request.body));

  app.put('/servers/:server_id/config-overrides', {
    config: { scope: 'write' },
    schema: {
      tags,
      summary: 'Replace the server\'s alert thresholds and push interval (checked against GET /alert-rules); answers the server',
      params,
      body: ConfigOverridesBody,
      response: responses({ 200: Server }),
    },
  }, async (request) => servers.replaceConfigOverrides(principalOf(request).accountId, request.params.server_id, request.body));

  app.delete('/servers/:server_id', {
    config: { scope: 'write', rateLimit: 'server-delete' },
    schema: { tags, summary: 'Move a server to the trash (needs confirm=true)', params, querystring: ConfirmQuery, response: responses({ 200: TrashResponse }) },
  }, async (request) => servers.trash(principalOf(request).accountId, request.params.server_id, request.query.confirm));

  app.post('/servers/:server_id/restore', {
    config: { scope: 'write' },
    schema: { tags, summary: 'Restore a trashed or suspended server', params, response: responses({ 200: RestoreResponse }) },
  }, async (request) => servers.restore(principalOf(request).accountId, request.params.server_id));

  app.post('/servers/:server_id/rotate-key', {
    config: { scope: 'write', rateLimit: 'server-rotate-key' },
    schema: { tags, summary: 'Replace the collector key; the old one stops working at once', params, response: responses({ 200: RotateKeyResponse }) },
  }, async (request) => servers.rotateKey(principalOf(request).accountId, request.params.server_id));

  app.get('/trashed-servers', {
    schema: { tags, summary: 'Servers in the trash, most recently trashed first', response: responses({ 200: ListTrashedResponse }) },
  }, async (request) => servers.listTrashed(principalOf(request).accountId));

  app.delete('/trashed-servers/:server_id', {
    config: { scope: 'write', capability: 'servers:purge', rateLimit: 'server-purge' },
    schema: {
      tags,
      summary: 'Destroy a trashed server permanently (account key with servers:purge, confirm=true, recent password check)',
      params,
      querystring: ConfirmQuery,
      response: responses({ 200: PurgeResponse }),
    },
  }, async (request) => servers.purge(principalOf(request), request.params.server_id, request.query.confirm));
};
