import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/auth.js';
import { IdParams, NoContent, responses } from '../../http/schemas.js';
import { CreateKeyBody, CreateKeyResponse, ListKeysResponse, VerifyPasswordBody, VerifyPasswordResponse } from './schemas.js';
import type { KeysService } from './service.js';

export const keysRoutes: FastifyPluginAsyncTypebox<{ keys: KeysService }> = async (app, { keys }) => {
  const tags = ['Account keys'];

  app.post('/account/keys', {
    config: { scope: 'admin' },
    schema: { tags, summary: 'Create an account key; its secret is shown once', body: CreateKeyBody, response: responses({ 201: CreateKeyResponse }) },
  }, async (request, reply) => reply.code(201).send(await keys.create(principalOf(request), request.body)));

  app.get('/account/keys', {
    schema: { tags, summary: 'List the live account keys (no secrets)', response: responses({ 200: ListKeysResponse }) },
  }, async (request) => keys.list(principalOf(request).accountId));

  app.delete('/account/keys/:key_id', {
    config: { scope: 'admin' },
    schema: { tags, summary: 'Revoke an account key at once', params: IdParams('key_id'), response: responses({ 204: NoContent }) },
  }, async (request, reply) => {
    await keys.revoke(principalOf(request).accountId, request.params.key_id);
    return reply.code(204).send(null);
  });

  app.post('/account/verify-password', {
    schema: {
      tags,
      summary: 'Re-authenticate the calling credential for 5 minutes (needed to purge)',
      body: VerifyPasswordBody,
      response: responses({ 200: VerifyPasswordResponse }),
    },
  }, async (request) => keys.verifyPassword(principalOf(request), request.body.password));
};
