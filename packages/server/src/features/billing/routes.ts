import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/auth.js';
import { ErrorEnvelope, responses } from '../../http/schemas.js';
import type { FeatureDeps } from '../deps.js';
import { billingRepo } from './repo.js';
import { BillingActionResponse, BillingRecord, PortalResponse } from './schemas.js';
import { billingService } from './service.js';

/** Legacy billing: readable for historical state, nothing can be bought. */
export const billingRoutes: FastifyPluginAsyncTypebox<FeatureDeps> = async (app, { store }) => {
  const billing = billingService({ repo: billingRepo(store.db) });
  const tags = ['Billing (legacy)'];

  app.get('/billing/status', {
    schema: { tags, summary: 'Legacy billing state of the account (historical values; nothing is charged)', response: responses({ 200: BillingRecord }) },
  }, async (request) => billing.status(principalOf(request).accountId));

  app.post('/billing/checkout', {
    config: { scope: 'write' },
    schema: { tags, summary: 'Retired: always 410 gone, Kiln charges nothing', response: responses({ 410: ErrorEnvelope }) },
  }, async () => billing.checkout());

  app.post('/billing/portal', {
    config: { scope: 'write' },
    schema: { tags, summary: 'Retired billing portal; answers without a URL for a residual legacy subscription', response: responses({ 200: PortalResponse }) },
  }, async (request) => billing.portal(principalOf(request).accountId));

  app.post('/billing/resume', {
    config: { scope: 'write' },
    schema: { tags, summary: 'Undo a scheduled end of a residual legacy subscription (clears cancel_at_period_end)', response: responses({ 200: BillingActionResponse }) },
  }, async (request) => billing.resume(principalOf(request).accountId));

  app.post('/billing/downgrade', {
    config: { scope: 'write' },
    schema: { tags, summary: 'End a residual legacy subscription at its period end; the account stays on free', response: responses({ 200: BillingActionResponse }) },
  }, async (request) => billing.downgrade(principalOf(request).accountId));
};
