import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ERROR_CODES } from '../../http/error-codes.js';
import { responses } from '../../http/schemas.js';
import type { FeatureDeps } from '../deps.js';
import { renderErrorsPage } from './errors-page.js';
import { DOCS_CSP } from './html.js';
import { renderReferencePage, type OpenApiDocument } from './reference-page.js';

const Html = Type.String({ description: 'text/html' });

/**
 * /api/v1/openapi.json, /docs and /docs/errors. The document is built by
 * @fastify/swagger from the routes' own schemas, and the reference page from
 * that document, so neither can drift from the code. app.swagger() only works
 * once the app is ready, so everything is generated on first request and kept:
 * routes cannot change after ready.
 */
export const docsRoutes: FastifyPluginAsyncTypebox<FeatureDeps> = async (app) => {
  let referenceHtml: string | null = null;
  let errorsHtml: string | null = null;
  const openapi = () => app.swagger() as unknown as OpenApiDocument;

  app.get('/api/v1/openapi.json', {
    config: { auth: 'public' },
    schema: { hide: true, response: responses({ 200: Type.Unknown({ description: 'OpenAPI 3.1 document' }) }) },
  }, async () => openapi());

  app.get('/docs', {
    config: { auth: 'public' },
    schema: { hide: true, response: responses({ 200: Html }) },
  }, async (_request, reply) => {
    referenceHtml ??= renderReferencePage(openapi());
    return reply.type('text/html; charset=utf-8').header('Content-Security-Policy', DOCS_CSP).send(referenceHtml);
  });

  app.get('/docs/errors', {
    config: { auth: 'public' },
    schema: { hide: true, response: responses({ 200: Html }) },
  }, async (_request, reply) => {
    errorsHtml ??= renderErrorsPage(ERROR_CODES);
    return reply.type('text/html; charset=utf-8').header('Content-Security-Policy', DOCS_CSP).send(errorsHtml);
  });
};
