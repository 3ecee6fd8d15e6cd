import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ERROR_CODES } from '../../http/error-codes.js';
import { notFound } from '../../http/errors.js';
import { responses } from '../../http/schemas.js';
import { RULES, ruleByType } from '../../rules/catalog.js';
import type { FeatureDeps } from '../deps.js';
import { renderRuleIndex, renderRulePage } from './alert-rules-page.js';
import { renderErrorsPage } from './errors-page.js';
import { DOCS_CSP } from './html.js';
import { renderReferencePage, type OpenApiDocument } from './reference-page.js';

const Html = Type.String({ description: 'text/html' });

/**
 * /api/v1/openapi.json, /docs, /docs/errors and the alert rule pages
 * (/docs/alerts, /docs/alerts/:type, from the rule catalog). The document is built by
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

  // The catalog is fixed for the life of the process: each page is rendered once.
  const alertPages = new Map<string, string>();
  const alertPage = (key: string, render: () => string): string => {
    let html = alertPages.get(key);
    if (html === undefined) alertPages.set(key, (html = render()));
    return html;
  };
  app.get('/docs/alerts', {
    config: { auth: 'public' },
    schema: { hide: true, response: responses({ 200: Html }) },
  }, async (_request, reply) => {
    const html = alertPage('', () => renderRuleIndex(RULES));
    return reply.type('text/html; charset=utf-8').header('Content-Security-Policy', DOCS_CSP).send(html);
  });

  app.get('/docs/alerts/:type', {
    config: { auth: 'public' },
    schema: { hide: true, params: Type.Object({ type: Type.String({ maxLength: 64 }) }), response: responses({ 200: Html }) },
  }, async (request, reply) => {
    const rule = ruleByType(request.params.type);
    if (!rule) throw notFound('alert type');
    const html = alertPage(rule.alert_type, () => renderRulePage(rule));
    return reply.type('text/html; charset=utf-8').header('Content-Security-Policy', DOCS_CSP).send(html);
  });
};
