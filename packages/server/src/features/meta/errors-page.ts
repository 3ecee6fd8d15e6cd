import type { ErrorCodeInfo } from '../../http/error-codes.js';
import { escapeHtml, page, prose } from './html.js';

/** /docs/errors: one section per code, anchored by the code itself, which every documentation_url points at. */
export function renderErrorsPage(codes: Record<string, ErrorCodeInfo>): string {
  const entries = Object.entries(codes);
  const index = entries
    .map(([code, info]) => `<tr><td><a href="#${escapeHtml(code)}"><code>${escapeHtml(code)}</code></a></td><td>${info.status}</td><td>${info.retryable ? 'yes' : 'no'}</td></tr>`)
    .join('\n');
  const sections = entries.map(([code, info]) => `
<section class="code" id="${escapeHtml(code)}">
<h3><code>${escapeHtml(code)}</code></h3>
<p><span class="badge">HTTP ${info.status}</span><span class="badge">${info.retryable ? 'retryable' : 'not retryable'}</span></p>
<p>${prose(info.summary)}</p>
<p><strong>What to do:</strong> ${prose(info.action)}</p>
</section>`).join('\n');

  return page('Kiln API errors', `
<p class="muted"><a href="/docs">API reference</a></p>
<h1>Errors</h1>
<p>Every answer with status 400 or above under <code>/api/</code> carries the same JSON envelope:</p>
<table>
<tr><th>Field</th><th>Meaning</th></tr>
<tr><td><code>error</code></td><td>Stable machine code, one of those below. Branch on it, never on <code>message</code>.</td></tr>
<tr><td><code>message</code></td><td>Human text; may change; not to be parsed.</td></tr>
<tr><td><code>request_id</code></td><td>Equals the <code>X-Request-Id</code> response header; quote it when reporting a problem.</td></tr>
<tr><td><code>documentation_url</code></td><td>This page, at the section of the code.</td></tr>
<tr><td><code>retryable</code></td><td>Whether repeating the same request later can succeed.</td></tr>
<tr><td><code>retry_after_seconds</code></td><td>Set on 429, equal to the <code>Retry-After</code> header; otherwise null.</td></tr>
<tr><td><code>details</code></td><td>Array of <code>{field, issue, value?}</code>; <code>field</code> is a JSON pointer into the body (<code>/tags/3</code>) or a parameter name.</td></tr>
</table>
<h2>Codes</h2>
<table>
<tr><th>Code</th><th>Status</th><th>Retryable</th></tr>
${index}
</table>
${sections}
`);
}
