import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { originOf } from '../../http/errors-plugin.js';
import { responses } from '../../http/schemas.js';
import type { FeatureDeps } from '../deps.js';
import { DASHBOARD_VERSION, agentVersionSource } from './agent-version.js';

export const VersionRecord = Type.Object({
  crucible: Type.Object({
    latest: Type.String({ description: 'Latest published agent version (the registry\'s `latest` dist-tag, else the bundled version)' }),
    min_supported: Type.String({ description: 'Agents below this version raise `agent_outdated`' }),
    changelog_url: Type.String({ description: 'Where agent releases are described' }),
  }),
  dashboard: Type.Object({ version: Type.String({ description: 'Version of this Kiln server' }) }),
});

/** GET /version: what agents poll to learn whether they should update. */
export const versionRoutes: FastifyPluginAsyncTypebox<FeatureDeps> = async (app, deps) => {
  const { config } = deps;
  const agents = agentVersionSource(deps);

  app.get('/version', {
    config: { auth: 'public' },
    schema: {
      tags: ['Meta'],
      summary: 'Latest and minimum supported agent versions, and the server version',
      security: [],
      response: responses({ 200: VersionRecord }),
    },
  }, async (request) => ({
    crucible: {
      latest: await agents.latest(),
      min_supported: config.minAgentVersion,
      changelog_url: config.agentChangelogUrl ?? `${originOf(request, config.publicUrl)}/docs#agent-versions`,
    },
    dashboard: { version: DASHBOARD_VERSION },
  }));
};
