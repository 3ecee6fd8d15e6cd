import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { absentAndNull, evaluate, input, table, type Case } from './support.js';

const sec = (block: string, value: unknown) => ({ security: { [block]: value } });
/** A block inside `security`: security absent or null, and the block itself null, are all not evaluated. */
const missing = (block: string): Case[] => [...absentAndNull('security'), [`security.${block} null`, sec(block, null), 'skip']];

describe('ssh_root_password: security.ssh.rootPasswordExposed', () => {
  table('ssh_root_password', [
    ['exposed', sec('ssh', { rootPasswordExposed: true, permitRootLogin: 'yes' }), 'warning'],
    ['not exposed', sec('ssh', { rootPasswordExposed: false }), 'clear'],
    ['unknown', sec('ssh', { rootPasswordExposed: null }), 'skip'],
    ...missing('ssh'),
  ]);
});

describe('no_firewall: security.firewall.active is false', () => {
  table('no_firewall', [
    ['inactive', sec('firewall', { active: false, source: 'none' }), 'warning'],
    ['active', sec('firewall', { active: true, source: 'nftables' }), 'clear'],
    ['unknown', sec('firewall', { active: null }), 'skip'],
    ['the agent could not check', sec('firewall', { available: false, active: false }), 'skip'],
    ...missing('firewall'),
  ]);

  it('recommends enabling a firewall without locking SSH out', () => {
    const [f] = evaluate('no_firewall', input(sec('firewall', { active: false, details: 'No firewall detected' })))!;
    assert.equal(f!.message, 'No firewall detected');
    assert.match(f!.recommendation, /ufw allow OpenSSH && ufw enable/);
    assert.match(f!.recommendation, /nft list ruleset/);
  });
});

describe('pending_security_updates: pendingCount > 10 and automatic updates not configured', () => {
  const updates = (count: number | null, configured: boolean | null | undefined, extra: Record<string, unknown> = {}) => ({
    security: { pending_updates: { pendingCount: count, available: true, ...extra }, ...(configured === undefined ? {} : { auto_updates: { configured } }) },
  });
  table('pending_security_updates', [
    ['10 pending, no auto updates', updates(10, false), 'clear'],
    ['11 pending, no auto updates', updates(11, false), 'warning'],
    ['11 pending, auto updates on', updates(11, true), 'clear'],
    ['11 pending, auto updates unknown', updates(11, null), 'skip'],
    ['11 pending, auto_updates block absent', updates(11, undefined), 'skip'],
    ['3 pending: clear whatever auto updates say', updates(3, undefined), 'clear'],
    ['count null', updates(null, false), 'skip'],
    ['the package manager could not be asked', updates(40, false, { available: false }), 'skip'],
    ...missing('pending_updates'),
    ['override warning 20: 15 pending', updates(15, false), 'clear', { thresholds: { pending_security_updates: { warning: 20 } } }],
  ]);
});

describe('kernel_vulnerabilities: a kernel_vulns entry with mitigated false', () => {
  const vulns = (...list: unknown[]) => sec('kernel_vulns', list);
  table('kernel_vulnerabilities', [
    ['all mitigated', vulns({ name: 'meltdown', status: 'Not affected', mitigated: true }), 'clear'],
    ['one unmitigated', vulns({ name: 'meltdown', mitigated: true }, { name: 'gather_data_sampling', status: 'Vulnerable: No microcode', mitigated: false }), 'warning'],
    ['mitigated unknown', vulns({ name: 'mds', mitigated: null }), 'clear'],
    ['empty list', vulns(), 'skip'],
    ['list of null', vulns(null), 'skip'],
    ...missing('kernel_vulns'),
  ]);

  it('lists the vulnerable ones', () => {
    const [f] = evaluate('kernel_vulnerabilities', input(vulns({ name: 'gds', status: 'Vulnerable', mitigated: false })))!;
    assert.deepEqual(f!.evidence, { vulnerabilities: [{ name: 'gds', status: 'Vulnerable' }] });
    assert.equal(f!.title, '1 unmitigated CPU vulnerability');
  });
});

describe('kernel_needs_reboot: kernel_reboot.needsReboot', () => {
  table('kernel_needs_reboot', [
    ['needs a reboot', sec('kernel_reboot', { needsReboot: true, running: '5.15.0-105', installed: '5.15.0-107' }), 'warning'],
    ['up to date', sec('kernel_reboot', { needsReboot: false }), 'clear'],
    ['unknown', sec('kernel_reboot', { needsReboot: null }), 'skip'],
    ...missing('kernel_reboot'),
  ]);
});

describe('unattended_upgrades_disabled: auto_updates.configured is false', () => {
  table('unattended_upgrades_disabled', [
    ['not configured', sec('auto_updates', { configured: false, mechanism: 'none' }), 'warning'],
    ['configured', sec('auto_updates', { configured: true, mechanism: 'unattended-upgrades' }), 'clear'],
    ['unknown', sec('auto_updates', { configured: null }), 'skip'],
    ...missing('auto_updates'),
  ]);

  it('tells how to turn them on for both distribution families', () => {
    const [f] = evaluate('unattended_upgrades_disabled', input(sec('auto_updates', { configured: false })))!;
    assert.match(f!.recommendation, /dpkg-reconfigure -plow unattended-upgrades/);
    assert.match(f!.recommendation, /dnf-automatic\.timer/);
  });
});
