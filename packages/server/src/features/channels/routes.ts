import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/auth.js';
import { IdParams, NoContent, responses } from '../../http/schemas.js';
import { deliveriesRepo } from '../../notify/deliveries-repo.js';
import { createSenders } from '../../notify/senders/index.js';
import type { FeatureDeps } from '../deps.js';
import { channelsRepo } from './repo.js';
import {
  Channel, CreateChannelBody, ListChannelsResponse, ListDeliveriesQuery, ListDeliveriesResponse, TestChannelResponse, UpdateChannelBody,
} from './schemas.js';
import { channelConfigSealer } from './sealed-config.js';
import { channelsService } from './service.js';

const params = IdParams('channel_id');

/** Notification channels: CRUD with masked secrets, a test send, and each channel's delivery attempts. */
export const channelsRoutes: FastifyPluginAsyncTypebox<FeatureDeps> = async (app, deps) => {
  const channels = channelsService({
    channels: channelsRepo(deps.store.db),
    deliveries: deliveriesRepo(deps.store.db),
    sealer: channelConfigSealer(deps.config.secretKey),
    senders: createSenders(deps.config),
    clock: deps.clock,
    secretKey: deps.config.secretKey,
  });
  const tags = ['Channels'];

  app.post('/channels', {
    config: { scope: 'write' },
    schema: { tags, summary: 'Create a notification channel', body: CreateChannelBody, response: responses({ 201: Channel }) },
  }, async (request, reply) => reply.code(201).send(await channels.create(principalOf(request).accountId, request.body)));

  app.get('/channels', {
    schema: { tags, summary: 'The account\'s channels, oldest first, secrets masked', response: responses({ 200: ListChannelsResponse }) },
  }, async (request) => channels.list(principalOf(request).accountId));

  app.get('/channels/:channel_id', {
    schema: { tags, summary: 'One channel, secrets masked', params, response: responses({ 200: Channel }) },
  }, async (request) => channels.get(principalOf(request).accountId, request.params.channel_id));

  app.put('/channels/:channel_id', {
    config: { scope: 'write' },
    schema: {
      tags,
      summary: 'Change name, config or enabled; a masked secret sent back unchanged keeps the stored one',
      params,
      body: UpdateChannelBody,
      response: responses({ 200: Channel }),
    },
  }, async (request) => channels.update(principalOf(request).accountId, request.params.channel_id, request.body));

  app.delete('/channels/:channel_id', {
    config: { scope: 'write' },
    schema: { tags, summary: 'Delete a channel and its delivery history', params, response: responses({ 204: NoContent }) },
  }, async (request, reply) => {
    await channels.remove(principalOf(request).accountId, request.params.channel_id);
    return reply.code(204).send(null);
  });

  app.post('/channels/:channel_id/test', {
    config: { scope: 'write' },
    schema: {
      tags,
      summary: 'Send a test notification now; always 200 {success, error?}, with the upstream reason on failure',
      params,
      response: responses({ 200: TestChannelResponse }),
    },
  }, async (request) => channels.test(principalOf(request).accountId, request.params.channel_id));

  app.get('/channels/:channel_id/deliveries', {
    schema: {
      tags,
      summary: 'Recent delivery attempts of the channel, newest first, one page at a time',
      params,
      querystring: ListDeliveriesQuery,
      response: responses({ 200: ListDeliveriesResponse }),
    },
  }, async (request) => channels.deliveries(principalOf(request).accountId, request.params.channel_id, request.query));
};
