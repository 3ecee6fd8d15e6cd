import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/auth.js';
import { IdParams, responses } from '../../http/schemas.js';
import type { FeatureDeps } from '../deps.js';
import { alertsRepo } from './repo.js';
import {
  AlertActionResponse, AlertRulesResponse, HostProfilesResponse, ListAlertsQuery, ListAlertsResponse, MuteBody, MutesResponse,
} from './schemas.js';
import { alertsService } from './service.js';

const serverParams = IdParams('server_id');
const alertParams = IdParams('alert_id');

/** Alerts of a server, acknowledge and resolve, mutes, and the public catalog of rules and host profiles. */
export const alertsRoutes: FastifyPluginAsyncTypebox<FeatureDeps> = async (app, deps) => {
  const alerts = alertsService({ repo: alertsRepo(deps.store.db, deps.store.dialect), clock: deps.clock });
  const tags = ['Alerts'];

  app.get('/servers/:server_id/alerts', {
    schema: {
      tags,
      summary: 'Alerts of a server, newest first, one page at a time',
      params: serverParams,
      querystring: ListAlertsQuery,
      response: responses({ 200: ListAlertsResponse }),
    },
  }, async (request) => alerts.list(principalOf(request).accountId, request.params.server_id, request.query));

  app.post('/alerts/:alert_id/acknowledge', {
    config: { scope: 'write' },
    schema: { tags, summary: 'Acknowledge: silences notification of the current occurrence', params: alertParams, response: responses({ 200: AlertActionResponse }) },
  }, async (request) => alerts.acknowledge(principalOf(request).accountId, request.params.alert_id));

  app.post('/alerts/:alert_id/resolve', {
    config: { scope: 'write' },
    schema: { tags, summary: 'Resolve by hand (a resolved alert is answered unchanged)', params: alertParams, response: responses({ 200: AlertActionResponse }) },
  }, async (request) => alerts.resolve(principalOf(request).accountId, request.params.alert_id));

  app.get('/servers/:server_id/mutes', {
    schema: { tags, summary: 'Muted rules of a server', params: serverParams, response: responses({ 200: MutesResponse }) },
  }, async (request) => alerts.mutes(principalOf(request).accountId, request.params.server_id));

  app.post('/servers/:server_id/mutes', {
    config: { scope: 'write' },
    schema: {
      tags,
      summary: 'Mute one rule; its active alerts resolve at once',
      params: serverParams,
      body: MuteBody,
      response: responses({ 200: MutesResponse }),
    },
  }, async (request) => alerts.mute(principalOf(request).accountId, request.params.server_id, request.body.alert_type));

  app.delete('/servers/:server_id/mutes', {
    config: { scope: 'write' },
    schema: { tags, summary: 'Unmute one rule', params: serverParams, body: MuteBody, response: responses({ 200: MutesResponse }) },
  }, async (request) => alerts.unmute(principalOf(request).accountId, request.params.server_id, request.body.alert_type));

  app.get('/alert-rules', {
    config: { auth: 'public' },
    schema: { tags, summary: 'The catalog of alert rules, their kinds and default thresholds', response: responses({ 200: AlertRulesResponse }) },
  }, async () => alerts.rules());

  app.get('/host-profiles', {
    config: { auth: 'public' },
    schema: { tags, summary: 'Host profiles and the alert types each silences', response: responses({ 200: HostProfilesResponse }) },
  }, async () => alerts.profiles());
};
