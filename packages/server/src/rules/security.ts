import { defineRule, fmt, levels, num, obj, objects, text } from './common.js';
import type { RuleDefinition, RuleInput } from './types.js';

/** Security posture as the agent sees it. Each rule reads one sub-block; a sub-block the agent could not fill is not evaluated. */

const security = (input: RuleInput) => obj(input.snapshot.security);
const autoUpdates = (input: RuleInput) => obj(security(input)?.auto_updates);

const ENABLE_AUTO_UPDATES = 'Debian/Ubuntu: `apt-get install unattended-upgrades && dpkg-reconfigure -plow unattended-upgrades`; RHEL family: `dnf install dnf-automatic && systemctl enable --now dnf-automatic.timer`.';

export const SECURITY_RULES: RuleDefinition[] = [
  defineRule({
    alert_type: 'ssh_root_password', kind: 'state', category: 'security', subject: null,
    description: 'Root can log in over SSH with a password, open to brute force.',
    thresholds: null,
    guidance: 'Set `PermitRootLogin prohibit-password` (or `no`) and `PasswordAuthentication no` in /etc/ssh/sshd_config after making sure key login works, then `sshd -t && systemctl reload ssh` (sshd on RHEL).',
    check(input) {
      const ssh = obj(security(input)?.ssh);
      const exposed = ssh?.rootPasswordExposed;
      if (typeof exposed !== 'boolean') return null;
      if (!exposed) return [];
      const permit = text(ssh!.permitRootLogin, 64);
      return [{
        subject: null, severity: 'warning',
        title: 'SSH allows root login with a password',
        message: `sshd accepts passwords for root${permit ? ` (PermitRootLogin ${permit})` : ''}.`,
        evidence: { permitRootLogin: permit, passwordAuthentication: ssh!.passwordAuthentication ?? null, port: num(ssh!.port) },
        recommendation: 'After checking that key login works, set `PermitRootLogin prohibit-password` in /etc/ssh/sshd_config and run `sshd -t && systemctl reload ssh`.',
      }];
    },
  }),
  defineRule({
    alert_type: 'no_firewall', kind: 'state', category: 'security', subject: null,
    description: 'No active firewall was found (ufw, firewalld, nftables, iptables).',
    thresholds: null,
    guidance: 'Allow SSH first, then turn a firewall on: `ufw allow OpenSSH && ufw enable`, or `systemctl enable --now firewalld`, or load an nftables ruleset (`nft list ruleset` shows what is loaded). Hosts whose provider filters traffic upstream can use a host profile or mute the rule.',
    check(input) {
      const firewall = obj(security(input)?.firewall);
      // Newer agents say when they could not check at all.
      if (!firewall || firewall.available === false || typeof firewall.active !== 'boolean') return null;
      if (firewall.active) return [];
      return [{
        subject: null, severity: 'warning',
        title: 'No active firewall',
        message: text(firewall.details) ?? 'No active firewall was detected.',
        evidence: { active: false, source: text(firewall.source, 64), details: text(firewall.details) },
        recommendation: 'Allow SSH, then enable a firewall: `ufw allow OpenSSH && ufw enable`, or `systemctl enable --now firewalld`, or load an nftables ruleset and check it with `nft list ruleset`.',
      }];
    },
  }),
  defineRule({
    alert_type: 'pending_security_updates', kind: 'state', category: 'security', subject: null,
    description: 'Many updates are pending and nothing installs them automatically.',
    thresholds: { warning: 10, unit: 'pending updates (alert above)' },
    guidance: `Review and install them (\`apt list --upgradable\` then \`apt-get upgrade\`; \`dnf check-update\` then \`dnf upgrade --security\`), then turn on automatic security updates. ${ENABLE_AUTO_UPDATES}`,
    check(input) {
      const pending = obj(security(input)?.pending_updates);
      const count = num(pending?.pendingCount);
      if (!pending || pending.available === false || count === null) return null;
      const level = levels(input, 'pending_security_updates', { warning: 10 }).warning!;
      if (count <= level) return [];
      const configured = autoUpdates(input)?.configured;
      if (typeof configured !== 'boolean') return null;
      if (configured) return [];
      const securityCount = num(pending.securityCount);
      return [{
        subject: null, severity: 'warning',
        title: `${fmt(count, 0)} updates pending, no automatic updates`,
        message: `${fmt(count, 0)} updates are pending${securityCount !== null ? ` (${fmt(securityCount, 0)} security)` : ''} and no automatic update mechanism is configured.`,
        evidence: { pendingCount: count, securityCount, distro: text(pending.distro, 64), auto_updates_configured: false, threshold: level },
        recommendation: `Install them (\`apt-get update && apt-get upgrade\`, or \`dnf upgrade --security\`) and enable automatic security updates. ${ENABLE_AUTO_UPDATES}`,
      }];
    },
  }),
  defineRule({
    alert_type: 'kernel_vulnerabilities', kind: 'state', category: 'security', subject: null,
    description: 'The kernel reports a CPU vulnerability it does not mitigate.',
    thresholds: null,
    guidance: 'See the status with `grep . /sys/devices/system/cpu/vulnerabilities/*`. Install the CPU microcode package (`intel-microcode` or `amd64-microcode`; `microcode_ctl` on RHEL) and a current kernel, then reboot. Check that no `mitigations=off` is on the kernel command line (`cat /proc/cmdline`).',
    check(input) {
      const entries = objects(security(input)?.kernel_vulns);
      if (entries.length === 0) return null;
      const open = entries.filter((v) => v.mitigated === false).map((v) => ({ name: text(v.name, 64) ?? '?', status: text(v.status) }));
      if (open.length === 0) return [];
      return [{
        subject: null, severity: 'warning',
        title: `${open.length} unmitigated CPU vulnerabilit${open.length === 1 ? 'y' : 'ies'}`,
        message: open.slice(0, 5).map((v) => `${v.name}: ${v.status ?? 'vulnerable'}`).join('; '),
        evidence: { vulnerabilities: open },
        recommendation: 'Run `grep . /sys/devices/system/cpu/vulnerabilities/*`; install CPU microcode (`intel-microcode`/`amd64-microcode`) and the latest kernel, check `/proc/cmdline` for `mitigations=off`, and reboot.',
      }];
    },
  }),
  defineRule({
    alert_type: 'kernel_needs_reboot', kind: 'state', category: 'security', subject: null,
    description: 'A newer kernel is installed than the one running; fixes in it are not active until a reboot.',
    thresholds: null,
    guidance: 'Schedule a reboot. Tell the agent it is planned (its expected-reboot marker) so the reboot does not raise unexpected_reboot.',
    check(input) {
      const reboot = obj(security(input)?.kernel_reboot);
      const needs = reboot?.needsReboot;
      if (typeof needs !== 'boolean') return null;
      if (!needs) return [];
      const running = text(reboot!.running, 100);
      const installed = text(reboot!.installed, 100);
      return [{
        subject: null, severity: 'warning',
        title: 'Reboot needed for the new kernel',
        message: running && installed ? `Running ${running}; installed ${installed}.` : 'A newer kernel is installed than the one running.',
        evidence: { running, installed },
        recommendation: 'Schedule a reboot into the installed kernel; mark it as planned with the agent first so it does not raise unexpected_reboot.',
      }];
    },
  }),
  defineRule({
    alert_type: 'unattended_upgrades_disabled', kind: 'state', category: 'security', subject: null,
    description: 'No automatic security update mechanism is configured.',
    thresholds: null,
    guidance: `Turn on automatic security updates. ${ENABLE_AUTO_UPDATES}`,
    check(input) {
      const auto = autoUpdates(input);
      const configured = auto?.configured;
      if (typeof configured !== 'boolean') return null;
      if (configured) return [];
      return [{
        subject: null, severity: 'warning',
        title: 'Automatic security updates are off',
        message: text(auto!.details) ?? 'No automatic security update mechanism was detected.',
        evidence: { configured: false, mechanism: text(auto!.mechanism, 64), details: text(auto!.details) },
        recommendation: ENABLE_AUTO_UPDATES,
      }];
    },
  }),
];
