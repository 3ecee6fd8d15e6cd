import { profilesSilencing } from '../../rules/profiles.js';
import type { RuleCategory, RuleDefinition } from '../../rules/types.js';
import { escapeHtml, page, prose } from './html.js';

/**
 * /docs/alerts and /docs/alerts/<type>: generated from the rule catalog
 * itself (descriptions, levels, boot grace, guidance, profiles), so the docs
 * cannot drift from what the engine evaluates.
 */

const CATEGORIES: Record<RuleCategory, string> = {
  host: 'Host resources', storage: 'Storage', network: 'Network', hardware: 'Hardware', security: 'Security', lifecycle: 'Lifecycle',
};

export const alertPagePath = (type: string) => `/docs/alerts/${encodeURIComponent(type)}`;

function levelsTable(rule: RuleDefinition): string {
  const t = rule.thresholds;
  const rows = t ? (['info', 'warning', 'critical'] as const).filter((k) => t[k] !== undefined) : [];
  if (!t || rows.length === 0) {
    return '<p>No numeric level: the condition above decides, and the level cannot be overridden. Mute the rule on a server where it does not apply.</p>';
  }
  const overridable = (k: string) => (k === 'info' ? 'no' : 'yes');
  return `<table>
<tr><th>Severity</th><th>Default level</th><th>Overridable</th></tr>
${rows.map((k) => `<tr><td>${k}</td><td>${escapeHtml(t[k])}</td><td>${overridable(k)}</td></tr>`).join('\n')}
</table>
${t.unit ? `<p class="muted">Unit: ${prose(t.unit)}.</p>` : ''}
<p>Change the levels of one server with <code>PUT /api/v1/servers/:id/config-overrides</code>: <code>{"thresholds": {"${escapeHtml(rule.alert_type)}": {"warning": …}}}</code>.</p>`;
}

const KIND_TEXT = {
  state: 'A <strong>state</strong> alert: active while the condition holds, resolved by the first snapshot that shows it clear.',
  event: 'An <strong>event</strong> alert: each occurrence stacks onto the active card (occurrences + 1, acknowledgement cleared, notified again); the card resolves 24 hours after its last occurrence.',
} as const;

/** One alert type: what it means, its levels, when it is not evaluated, who silences it, what to do. */
export function renderRulePage(rule: RuleDefinition): string {
  const type = escapeHtml(rule.alert_type);
  const profiles = profilesSilencing(rule.alert_type);
  const notes = [
    KIND_TEXT[rule.kind],
    rule.subject
      ? `One alert per ${escapeHtml(rule.subject)}: two in trouble are two alerts, each resolving on its own.`
      : 'One alert per server (no subject).',
    rule.boot_grace_seconds
      ? `Not evaluated during the first ${rule.boot_grace_seconds} seconds after a boot (<code>system.uptime_seconds</code>), when readings are not yet meaningful.`
      : null,
    rule.evaluate
      ? 'Not evaluated when the snapshot lacks the data it reads (block absent or <code>null</code>, or the agent could not read it): a missing block is not evidence of health, so active alerts of this type stay as they are.'
      : 'Raised outside snapshots, by a watchdog that runs every minute.',
  ].filter(Boolean);

  return page(`${rule.alert_type}: Kiln alert`, `
<p class="muted"><a href="/docs">API reference</a> · <a href="/docs/alerts">Alert rules</a></p>
<h1><code>${type}</code></h1>
<p><span class="badge">${escapeHtml(CATEGORIES[rule.category])}</span><span class="badge">${escapeHtml(rule.kind)}</span>${rule.subject ? `<span class="badge">per ${escapeHtml(rule.subject)}</span>` : ''}</p>
<p>${prose(rule.description)}</p>
<h2>Levels</h2>
${levelsTable(rule)}
<h2>How it is evaluated</h2>
<ul>${notes.map((n) => `<li>${n}</li>`).join('\n')}</ul>
<h2>Host profiles</h2>
<p>${profiles.length
    ? `Silenced on servers with the profile ${profiles.map((p) => `<code>${escapeHtml(p)}</code>`).join(', ')}: never raised or notified there, and setting the profile resolves active alerts of this type.`
    : 'No host profile silences it. Mute it per server with <code>POST /api/v1/servers/:id/mutes</code>.'}</p>
<h2>What to do</h2>
<p>${prose(rule.guidance ?? rule.description)}</p>
<p class="muted">Each alert also carries a <code>recommendation</code> specific to what was found, with the commands to run.</p>
`);
}

/** All alert types by category, with how alerts behave in general. */
export function renderRuleIndex(rules: readonly RuleDefinition[]): string {
  const sections = (Object.keys(CATEGORIES) as RuleCategory[]).map((category) => {
    const inCategory = rules.filter((r) => r.category === category);
    if (inCategory.length === 0) return '';
    const rows = inCategory.map((r) => `<tr><td><a href="${escapeHtml(alertPagePath(r.alert_type))}"><code>${escapeHtml(r.alert_type)}</code></a></td><td>${escapeHtml(r.kind)}</td><td>${escapeHtml(r.subject ?? '–')}</td><td>${prose(r.description)}</td></tr>`).join('\n');
    return `<section id="${escapeHtml(category)}">
<h2>${escapeHtml(CATEGORIES[category])}</h2>
<table>
<tr><th>Alert type</th><th>Kind</th><th>Subject</th><th>Meaning</th></tr>
${rows}
</table>
</section>`;
  }).join('\n');

  return page('Kiln alert rules', `
<p class="muted"><a href="/docs">API reference</a></p>
<h1>Alert rules</h1>
<p>Every snapshot is checked against these rules. An alert is keyed by server, alert type and subject (a mount, device, interface, pool, sensor or GPU index, or none).
<code>GET /api/v1/alert-rules</code> lists the same catalog as JSON, with the default levels.</p>
<ul>
<li><strong>State</strong> alerts stay active while their condition holds and resolve when a snapshot shows it clear. <strong>Event</strong> alerts stack occurrences onto one card and resolve 24 hours after the last one.</li>
<li>A rule whose data is missing from a snapshot is not evaluated: its alerts neither resolve nor appear.</li>
<li>Acknowledging an alert silences notifications of its current occurrence. Resolving one by hand always works, but a state alert whose condition still holds is raised again, as a new alert, by the next snapshot; mute the rule to stop it.</li>
<li>Muting a rule on a server resolves its active alerts at once; host profiles silence a few rules for a kind of host.</li>
</ul>
${sections}
`);
}
