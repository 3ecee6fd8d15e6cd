import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { absentAndNull, evaluate, graceCases, input, table } from './support.js';

const nic = (extra: Record<string, unknown>) => ({ interface: 'eth0', operstate: 'up', speed_mbps: 1000, rx_bytes_sec: 0, tx_bytes_sec: 0, rx_errors: 0, tx_errors: 0, rx_drops: 0, tx_drops: 0, ...extra });
const net = (...list: unknown[]) => ({ network: list });

describe('interface_errors: rx + tx errors ≥ 10 warning, ≥ 100 critical; drops ≥ 1 % of packets; 120 s boot grace', () => {
  const errors = (rx: number, tx: number) => net(nic({ rx_errors: rx, tx_errors: tx }));
  const drops = (dropped: number, packets: number | null) => net(nic({ rx_drops: dropped, rx_packets: packets, tx_packets: packets === null ? null : 0 }));
  table('interface_errors', [
    ['9 errors', errors(5, 4), 'clear'],
    ['10 errors', errors(6, 4), 'warning'],
    ['99 errors', errors(0, 99), 'warning'],
    ['100 errors', errors(50, 50), 'critical'],
    ['9 drops of 1000 packets (0.9 %)', drops(9, 1000), 'clear'],
    ['10 drops of 1000 packets (1 %)', drops(10, 1000), 'warning'],
    ['20 drops of 1000 packets', drops(20, 1000), 'warning'],
    ['5 drops of 100 packets: 5 %, but a handful on a quiet port', drops(5, 100), 'clear'],
    ['drops without packet counts are not judged', drops(500, null), 'clear'],
    ['counters null', net(nic({ rx_errors: null, tx_errors: null, rx_drops: null, tx_drops: null })), 'clear'],
    ['empty list', net(), 'skip'],
    ...absentAndNull('network'),
    ...graceCases(120, errors(100, 0), 'critical'),
    ['override warning 50: 20 errors', errors(20, 0), 'clear', { thresholds: { interface_errors: { warning: 50 } } }],
    ['override critical 20: 20 errors', errors(20, 0), 'critical', { thresholds: { interface_errors: { critical: 20 } } }],
  ]);

  it('one finding per interface, each naming its counters', () => {
    const found = evaluate('interface_errors', input(net(nic({ rx_errors: 12 }), nic({ interface: 'eth1', tx_errors: 300 }), nic({ interface: 'eth2' }))))!;
    assert.deepEqual(found.map((f) => [f.subject, f.severity]), [['eth0', 'warning'], ['eth1', 'critical']]);
    assert.equal(found[0]!.title, 'Interface eth0: 12 errors');
    assert.match(found[0]!.recommendation, /ethtool -S eth0/);
  });
});

describe('link_speed_mismatch: up and 0 < speed < 1000, virtual interfaces skipped', () => {
  const link = (speed: number | null, extra: Record<string, unknown> = {}) => net(nic({ speed_mbps: speed, ...extra }));
  table('link_speed_mismatch', [
    ['100 Mb/s', link(100), 'warning'],
    ['999 Mb/s', link(999), 'warning'],
    ['1000 Mb/s', link(1000), 'clear'],
    ['speed 0 (unknown)', link(0), 'clear'],
    ['speed −1 (no link)', link(-1), 'clear'],
    ['speed null', link(null), 'clear'],
    ['down at 100 Mb/s', link(100, { operstate: 'down' }), 'clear'],
    ['UP in capitals', link(100, { operstate: 'UP' }), 'warning'],
    ...['lo', 'docker0', 'veth1a2b', 'br-4f2a', 'virbr0', 'ifb0', 'tun0', 'tap3', 'idrac'].map((name) =>
      [`${name} is not checked`, link(10, { interface: name }), 'clear'] as [string, Record<string, unknown>, 'clear']),
    ['a name that only contains a virtual prefix is checked (eth-tap)', link(100, { interface: 'eth-tap' }), 'warning'],
    ['bridge0 is not in the skip-list', link(100, { interface: 'bridge0' }), 'warning'],
    ...absentAndNull('network'),
    ['override warning 10000: 1000 Mb/s', link(1000), 'warning', { thresholds: { link_speed_mismatch: { warning: 10_000 } } }],
  ]);
});

describe('interface_saturation: max(rx, tx) ≥ 90 % of link speed', () => {
  // 1 Gb/s is 125,000,000 bytes/s; 90 % of it 112,500,000.
  const traffic = (rx: number | null, tx: number | null, speed: number | null = 1000) => net(nic({ rx_bytes_sec: rx, tx_bytes_sec: tx, speed_mbps: speed }));
  table('interface_saturation', [
    ['89.99 % in', traffic(112_490_000, 0), 'clear'],
    ['90 % in', traffic(112_500_000, 0), 'warning'],
    ['90 % out', traffic(0, 112_500_000), 'warning'],
    ['100 % out', traffic(1_000, 125_000_000), 'warning'],
    ['speed 0', traffic(1e9, 1e9, 0), 'clear'],
    ['speed null', traffic(1e9, 1e9, null), 'clear'],
    ['no rates', traffic(null, null), 'clear'],
    ...absentAndNull('network'),
    ['override warning 50: 60 %', traffic(75_000_000, 0), 'warning', { thresholds: { interface_saturation: { warning: 50 } } }],
  ]);
});

describe('bond_slave_down: a bond member whose operstate is down; 60 s boot grace', () => {
  const member = (operstate: string | null, bond: string | null = 'bond0') => net(nic({ interface: 'eno2', operstate, bond_master: bond }));
  table('bond_slave_down', [
    ['member up', member('up'), 'clear'],
    ['member down', member('down'), 'critical'],
    ['member lowerlayerdown', member('lowerlayerdown'), 'critical'],
    ['member state unknown', member('unknown'), 'clear'],
    ['member state null', member(null), 'clear'],
    ['a down interface that is in no bond', member('down', null), 'clear'],
    ...absentAndNull('network'),
    ...graceCases(60, member('down'), 'critical'),
  ]);

  it('names the bond and the member', () => {
    const [f] = evaluate('bond_slave_down', input(member('down')))!;
    assert.equal(f!.title, 'Bond bond0: member eno2 is down');
    assert.match(f!.recommendation, /cat \/proc\/net\/bonding\/bond0/);
  });
});
