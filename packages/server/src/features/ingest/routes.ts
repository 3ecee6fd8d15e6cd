import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { collectorKeyHashOf } from '../../http/auth.js';
import { contentEncodingHook } from '../../http/json-body.js';
import { Timestamp, responses } from '../../http/schemas.js';
import { alertEngine } from '../alerts/engine.js';
import type { FeatureDeps } from '../deps.js';
import { gatedIngest } from './gate.js';
import { ingestRepo } from './repo.js';
import { ingestService } from './service.js';
import { Snapshot } from './snapshot-schema.js';

/** At most 1 MiB of JSON, counted after decompression. */
export const INGEST_BODY_LIMIT_BYTES = 1024 * 1024;

const IngestResponse = Type.Object({
  success: Type.Literal(true),
  received_at: Timestamp,
  new_alerts: Type.Integer({ description: 'Alerts this snapshot raised' }),
  active_alerts: Type.Integer({ description: 'Alerts of the server active after this snapshot' }),
});

const KeyCheckResponse = Type.Object({
  success: Type.Literal(true),
  server: Type.Object({ id: Type.String(), name: Type.String() }),
});

/** POST and GET /ingest: agents push snapshots and check their collector key. */
export const ingestRoutes: FastifyPluginAsyncTypebox<FeatureDeps> = async (app, deps) => {
  const ingest = gatedIngest(ingestService({
    repo: ingestRepo(deps.store.db, deps.store.dialect),
    clock: deps.clock,
    alerts: alertEngine({ minAgentVersion: deps.config.minAgentVersion, logger: deps.logger }),
  }), deps.ingestGate, deps.clock);
  const tags = ['Ingest'];

  app.post('/ingest', {
    config: { auth: 'collector', keepRawJson: true },
    bodyLimit: INGEST_BODY_LIMIT_BYTES,
    preParsing: contentEncodingHook(INGEST_BODY_LIMIT_BYTES),
    schema: {
      tags,
      summary: 'Push a snapshot (JSON, optionally Content-Encoding: gzip; at most 1 MiB decompressed; one per server per 55 s)',
      body: Snapshot,
      response: responses({ 200: IngestResponse }),
    },
  }, async (request) => ingest.ingest(collectorKeyHashOf(request), request.body, request.rawJson ?? JSON.stringify(request.body)));

  app.get('/ingest', {
    config: { auth: 'collector' },
    schema: { tags, summary: 'Check a collector key: the server it belongs to', response: responses({ 200: KeyCheckResponse }) },
  }, async (request) => ingest.check(collectorKeyHashOf(request)));
};
