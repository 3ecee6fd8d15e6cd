/** Small helpers for the server-rendered docs pages: escaping and one self-contained layout. */
import { createHash } from 'node:crypto';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for element content and quoted attribute values alike. */
export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (ch) => ESCAPES[ch]!);
}

/** Escapes prose and turns `backticked` spans into <code>; the text is escaped first, so nothing can inject markup. */
export function prose(text: string): string {
  return escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');
}

/** A string usable as an id and URL fragment: lower case, [a-z0-9-]. */
export function slug(value: string): string {
  return value.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '') || 'x';
}

// Inline so the pages work offline, behind strict proxies and under the CSP sent with them.
const STYLE = `
:root { color-scheme: light dark; --fg: #1d232b; --muted: #5b6673; --bg: #ffffff; --panel: #f4f6f8; --line: #d9dee4; --accent: #b4480e; }
@media (prefers-color-scheme: dark) { :root { --fg: #e3e7ec; --muted: #9aa5b1; --bg: #14181d; --panel: #1d232b; --line: #2f3843; --accent: #f08a4b; } }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
main { max-width: 960px; margin: 0 auto; padding: 24px 20px 80px; }
h1 { font-size: 1.9rem; margin: 0.2em 0 0.4em; }
h2 { font-size: 1.45rem; margin: 2.2em 0 0.6em; padding-bottom: 0.25em; border-bottom: 1px solid var(--line); }
h3 { font-size: 1.1rem; margin: 0 0 0.4em; font-weight: 600; }
h4 { font-size: 0.95rem; margin: 1em 0 0.3em; color: var(--muted); text-transform: uppercase; letter-spacing: 0.04em; }
a { color: var(--accent); }
code { font: 0.9em ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: var(--panel); padding: 0.1em 0.3em; border-radius: 4px; }
nav ul { columns: 2; padding-left: 1.2em; }
.op, .code { border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; margin: 14px 0; }
.op:target, .code:target { outline: 2px solid var(--accent); }
.method { display: inline-block; min-width: 4.2em; font: 700 0.8rem ui-monospace, monospace; padding: 2px 6px; margin-right: 6px; border-radius: 4px; background: var(--fg); color: var(--bg); text-align: center; }
.muted { color: var(--muted); }
.badge { display: inline-block; font-size: 0.8rem; padding: 1px 8px; border: 1px solid var(--line); border-radius: 999px; margin-right: 6px; }
table { width: 100%; border-collapse: collapse; margin: 0.3em 0 0.8em; font-size: 0.92rem; }
th, td { text-align: left; vertical-align: top; padding: 5px 8px; border-bottom: 1px solid var(--line); }
th { color: var(--muted); font-weight: 600; }
td:first-child { white-space: nowrap; }
`;

export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body><main>
${body}
</main></body>
</html>
`;
}

/**
 * Sent with every docs page: no scripts, no outside resources, and of inline
 * styles only the layout's own, named by its hash, so markup that slipped
 * through escaping could not even restyle the page.
 */
export const DOCS_CSP = `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;
