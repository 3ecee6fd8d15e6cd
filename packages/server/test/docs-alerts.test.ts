import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { renderRuleIndex, renderRulePage } from '../src/features/meta/alert-rules-page.js';
import { escapeHtml, prose } from '../src/features/meta/html.js';
import { RULES } from '../src/rules/catalog.js';
import type { RuleDefinition } from '../src/rules/types.js';
import { api, describeEachStore } from './helpers/app.js';

describeEachStore('GET /docs/alerts', (t) => {
  test('/docs links the alert rule index, which links a page for every alert type of the catalog', async () => {
    const reference = await api(t, 'GET', '/docs');
    assert.ok(reference.raw.includes('href="/docs/alerts"'));

    const index = await api(t, 'GET', '/docs/alerts');
    assert.equal(index.status, 200);
    assert.match(String(index.headers['content-type']), /^text\/html; charset=utf-8/);
    assert.match(String(index.headers['content-security-policy']), /default-src 'none'/);
    for (const rule of RULES) assert.ok(index.raw.includes(`href="/docs/alerts/${rule.alert_type}"`), rule.alert_type);
    assert.match(index.raw, /raised again, as a new alert, by the next snapshot/);
  });

  test('every alert type has a public page with its meaning, levels, grace, profiles and what to do', async () => {
    for (const rule of RULES) {
      const res = await api(t, 'GET', `/docs/alerts/${rule.alert_type}`);
      assert.equal(res.status, 200, rule.alert_type);
      const html = res.raw;
      assert.ok(html.includes(`<h1><code>${rule.alert_type}</code></h1>`), rule.alert_type);
      assert.ok(html.includes(prose(rule.description)), `${rule.alert_type}: description`);
      assert.ok(html.includes(prose(rule.guidance!)), `${rule.alert_type}: what to do`);
      for (const level of ['warning', 'critical'] as const) {
        const value = rule.thresholds?.[level];
        if (value !== undefined) assert.ok(html.includes(`<td>${level}</td><td>${value}</td>`), `${rule.alert_type}: ${level} ${value}`);
      }
      if (rule.boot_grace_seconds) assert.ok(html.includes(`first ${rule.boot_grace_seconds} seconds after a boot`), `${rule.alert_type}: grace`);
      assert.doesNotMatch(html, /<script|<link|<iframe|\ssrc=/i);
    }
  });

  test('the pages name the profile that silences a type', async () => {
    assert.match((await api(t, 'GET', '/docs/alerts/no_firewall')).raw, /Silenced on servers with the profile <code>marketplace_gpu<\/code>/);
    assert.match((await api(t, 'GET', '/docs/alerts/disk_space_high')).raw, /No host profile silences it/);
  });

  test('an unknown alert type is 404', async () => {
    for (const type of ['nope', '__proto__', 'x'.repeat(65)]) {
      const res = await api(t, 'GET', `/docs/alerts/${type}`);
      assert.ok(res.status === 404 || res.status === 400, `${type}: ${res.status}`);
    }
    assert.equal((await api(t, 'GET', '/docs/alerts/nope')).status, 404);
  });
});

describe('alert rule pages', () => {
  test('escape everything taken from a rule', () => {
    const evil = '<img src=x onerror=alert(1)>"\'&';
    const rule: RuleDefinition = {
      alert_type: evil, kind: 'state', category: 'host', subject: evil, description: evil, guidance: evil,
      thresholds: { warning: 1, unit: evil },
    };
    for (const html of [renderRulePage(rule), renderRuleIndex([rule])]) {
      assert.doesNotMatch(html, /<img/);
      assert.ok(html.includes(escapeHtml(evil)));
    }
  });
});
