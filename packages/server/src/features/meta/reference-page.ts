import { escapeHtml, page, prose, slug } from './html.js';
import { fieldRows, schemaResolver, typeName, type FieldRow, type JsonSchema } from './schema-fields.js';
import { ACCESS_EXTENSION } from './openapi-access.js';

/** The parts of an OpenAPI 3.1 document the reference page reads. */
export interface OpenApiDocument {
  openapi: string;
  info?: { title?: string; description?: string; version?: string };
  servers?: Array<{ url: string }>;
  paths?: Record<string, Record<string, any>>;
  components?: { schemas?: Record<string, JsonSchema> };
  security?: Array<Record<string, string[]>>;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/**
 * Who may call an operation: from the route config when the document carries
 * it (see openapi-access.ts), else from a `security` the operation declares
 * itself. The document-wide default says nothing about a single route, so an
 * operation with neither gets no label rather than a guess.
 */
export function accessLabel(op: Record<string, any>): string | null {
  const access = op[ACCESS_EXTENSION] as { auth?: string; scope?: string; capability?: string } | undefined;
  if (access?.auth === 'public') return 'Public';
  if (access?.auth === 'collector') return 'Collector key';
  if (access) {
    const scope = access.scope ?? 'read';
    const label = scope === 'read' ? 'Authenticated (read scope)' : `${scope[0]!.toUpperCase()}${scope.slice(1)} scope`;
    return access.capability ? `${label} + capability ${access.capability}` : label;
  }
  if (!Array.isArray(op.security)) return null;
  const open = op.security.length === 0 || op.security.some((s: Record<string, unknown>) => Object.keys(s).length === 0);
  return open ? 'Public' : 'Authenticated';
}

function fieldTable(rows: FieldRow[], withRequired: boolean): string {
  if (rows.length === 0) return '';
  const head = `<tr><th>Field</th><th>Type</th>${withRequired ? '<th>Required</th>' : ''}<th>Notes</th></tr>`;
  const body = rows.map((r) => `<tr><td><code>${escapeHtml(r.name)}</code></td><td>${escapeHtml(r.type)}</td>${
    withRequired ? `<td>${r.required ? 'yes' : 'no'}</td>` : ''}<td>${r.notes.map(prose).join('; ')}</td></tr>`).join('\n');
  return `<table>${head}\n${body}</table>`;
}

function jsonSchemaOf(content: Record<string, { schema?: JsonSchema }> | undefined): JsonSchema | undefined {
  if (!content) return undefined;
  return (content['application/json'] ?? Object.values(content)[0])?.schema;
}

function renderOperation(method: string, path: string, op: Record<string, any>, doc: OpenApiDocument, basePath: string): string {
  const resolve = schemaResolver(doc.components?.schemas);
  const fullPath = `${basePath}${path}`;
  const parts: string[] = [
    `<article class="op" id="${escapeHtml(`op-${method}-${slug(fullPath)}`)}">`,
    `<h3><span class="method">${escapeHtml(method.toUpperCase())}</span><code>${escapeHtml(fullPath)}</code></h3>`,
  ];
  if (op.summary) parts.push(`<p>${prose(op.summary)}</p>`);
  if (op.description) parts.push(`<p>${prose(op.description)}</p>`);
  const access = accessLabel(op);
  const badges = [access && `<span class="badge">${escapeHtml(access)}</span>`, op.deprecated && '<span class="badge">deprecated</span>'];
  if (badges.some(Boolean)) parts.push(`<p>${badges.filter(Boolean).join('')}</p>`);

  const params = (op.parameters ?? []) as Array<{ name: string; in: string; required?: boolean; description?: string; schema?: JsonSchema }>;
  if (params.length > 0) {
    parts.push('<h4>Parameters</h4><table><tr><th>Name</th><th>In</th><th>Type</th><th>Required</th><th>Notes</th></tr>');
    for (const p of params) {
      const notes = [p.description, p.schema?.description].filter(Boolean).map((n) => prose(String(n))).join('; ');
      parts.push(`<tr><td><code>${escapeHtml(p.name)}</code></td><td>${escapeHtml(p.in)}</td><td>${escapeHtml(typeName(p.schema, resolve))}</td><td>${p.required ? 'yes' : 'no'}</td><td>${notes}</td></tr>`);
    }
    parts.push('</table>');
  }

  const body = jsonSchemaOf(op.requestBody?.content);
  if (body) {
    const rows = fieldRows(body, resolve);
    parts.push('<h4>Request body (JSON)</h4>', rows.length ? fieldTable(rows, true) : `<p>${escapeHtml(typeName(body, resolve))}</p>`);
  }

  const errors: string[] = [];
  for (const [status, response] of Object.entries((op.responses ?? {}) as Record<string, any>)) {
    if (!/^2/.test(status)) {
      errors.push(status);
      continue;
    }
    const schema = jsonSchemaOf(response.content);
    const rows = fieldRows(schema, resolve);
    parts.push(`<h4>Response ${escapeHtml(status)}</h4>`);
    if (rows.length) parts.push(fieldTable(rows, false));
    else parts.push(`<p>${schema ? escapeHtml(typeName(schema, resolve)) : escapeHtml(response.description ?? 'No content')}</p>`);
  }
  if (errors.length > 0) {
    parts.push(`<p class="muted">Errors (${errors.map(escapeHtml).join(', ')}) carry the <a href="/docs/errors">error envelope</a>.</p>`);
  }
  parts.push('</article>');
  return parts.join('\n');
}

function basePathOf(doc: OpenApiDocument): string {
  const url = doc.servers?.[0]?.url ?? '';
  const path = url.startsWith('/') ? url : (() => { try { return new URL(url).pathname; } catch { return ''; } })();
  return path.replace(/\/+$/, '');
}

const AGENT_VERSIONS = (base: string) => `
<section id="agent-versions">
<h2>Agent versions</h2>
<p>Agents call <code>GET ${escapeHtml(base)}/version</code> (public, no credential) to learn whether they should update. The answer:</p>
<table>
<tr><th>Field</th><th>Meaning</th></tr>
<tr><td><code>crucible.latest</code></td><td>The latest published agent version: the <code>latest</code> dist-tag of <code>AGENT_PACKAGE</code> in the registry at <code>AGENT_REGISTRY_URL</code>, looked up at most once an hour. When no registry is configured, or it cannot be reached (looked up again after 5 minutes), the last version the registry gave, else the agent version bundled with this server release.</td></tr>
<tr><td><code>crucible.min_supported</code></td><td><code>MIN_AGENT_VERSION</code>. Servers whose agent is older raise the <code>agent_outdated</code> alert.</td></tr>
<tr><td><code>crucible.changelog_url</code></td><td><code>AGENT_CHANGELOG_URL</code>, else this section.</td></tr>
<tr><td><code>dashboard.version</code></td><td>The version of this Kiln server.</td></tr>
</table>
<p>Snapshots accept unknown fields, so a newer agent can report more than this server knows about without a coupled upgrade.</p>
</section>`;

/** The API reference, generated from the same OpenAPI document as /api/v1/openapi.json, so it cannot drift. */
export function renderReferencePage(doc: OpenApiDocument): string {
  const base = basePathOf(doc);
  const byTag = new Map<string, string[]>();
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const tag = String(op.tags?.[0] ?? 'Other');
      if (!byTag.has(tag)) byTag.set(tag, []);
      byTag.get(tag)!.push(renderOperation(method, path, op, doc, base));
    }
  }
  const toc = [...byTag.keys()].map((tag) => `<li><a href="#tag-${slug(tag)}">${escapeHtml(tag)}</a></li>`).join('\n');
  const sections = [...byTag.entries()]
    .map(([tag, ops]) => `<section id="tag-${slug(tag)}">\n<h2>${escapeHtml(tag)}</h2>\n${ops.join('\n')}\n</section>`).join('\n');
  const title = doc.info?.title ?? 'API';

  return page(`${title} reference`, `
<h1>${escapeHtml(title)} reference</h1>
${doc.info?.description ? `<p>${prose(doc.info.description)}</p>` : ''}
<p>Base URL: <code>${escapeHtml(doc.servers?.[0]?.url ?? base)}</code>. Bodies are JSON; timestamps are ISO 8601 UTC strings.
Authenticated endpoints take <code>Authorization: Bearer &lt;token&gt;</code> with a session token (from register or login) or an account key (<code>mk_…</code>);
an account key needs the scope shown on the endpoint. Collector keys (<code>col_…</code>) authenticate only the ingest endpoint.</p>
<p>Machine-readable: <a href="${escapeHtml(base)}/openapi.json">OpenAPI 3.1 document</a>. Every error: <a href="/docs/errors">error codes</a>. Every alert type, with what to do about it: <a href="/docs/alerts">alert rules</a>. Agents: <a href="#agent-versions">agent versions</a>.</p>
<nav><h2>Contents</h2><ul>
${toc}
<li><a href="#agent-versions">Agent versions</a></li>
<li><a href="/docs/errors">Errors</a></li>
<li><a href="/docs/alerts">Alert rules</a></li>
</ul></nav>
${sections}
${AGENT_VERSIONS(base)}
<section id="errors">
<h2>Errors</h2>
<p>Every answer with status 400 or above under <code>/api/</code> is a JSON envelope with <code>error</code>, <code>message</code>, <code>request_id</code>, <code>documentation_url</code>, <code>retryable</code>, <code>retry_after_seconds</code> and <code>details</code>. The codes, with what to do about each: <a href="/docs/errors">/docs/errors</a>.</p>
</section>
`);
}
