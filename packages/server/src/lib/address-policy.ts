import { BlockList, isIP } from 'node:net';

/**
 * Which addresses a channel may reach. A channel URL is chosen by a user, so
 * without this the service could be made to POST to its own admin ports, the
 * database, or the cloud metadata endpoint (169.254.169.254) and report
 * the answer back through the test endpoint's error text.
 */

// Never a legitimate destination, whatever the operator allows: link-local
// holds the cloud metadata service; the rest are not unicast hosts at all.
const NEVER = new BlockList();
NEVER.addSubnet('0.0.0.0', 8, 'ipv4');
NEVER.addSubnet('169.254.0.0', 16, 'ipv4');
NEVER.addSubnet('224.0.0.0', 4, 'ipv4');
NEVER.addSubnet('240.0.0.0', 4, 'ipv4');
NEVER.addAddress('::', 'ipv6');
NEVER.addSubnet('fe80::', 10, 'ipv6');
NEVER.addSubnet('ff00::', 8, 'ipv6');

// Reachable only when the operator sets ALLOW_PRIVATE_TARGETS (an install
// whose receivers live on its own network).
const PRIVATE = new BlockList();
PRIVATE.addSubnet('127.0.0.0', 8, 'ipv4');
PRIVATE.addSubnet('10.0.0.0', 8, 'ipv4');
PRIVATE.addSubnet('172.16.0.0', 12, 'ipv4');
PRIVATE.addSubnet('192.168.0.0', 16, 'ipv4');
PRIVATE.addSubnet('100.64.0.0', 10, 'ipv4');
PRIVATE.addSubnet('192.0.0.0', 24, 'ipv4');
PRIVATE.addSubnet('198.18.0.0', 15, 'ipv4');
PRIVATE.addAddress('::1', 'ipv6');
PRIVATE.addSubnet('fc00::', 7, 'ipv6');

export type AddressVerdict = 'allowed' | 'private' | 'forbidden';

/**
 * The verdict for one IP address. IPv4-mapped IPv6 forms (`::ffff:127.0.0.1`)
 * are judged as the IPv4 address they carry: BlockList matches IPv4 rules
 * against them.
 */
export function judgeAddress(address: string): AddressVerdict {
  const family = isIP(address);
  if (family === 0) return 'forbidden';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (NEVER.check(address, type)) return 'forbidden';
  if (PRIVATE.check(address, type)) return 'private';
  return 'allowed';
}

/** Null when the address may be reached under the policy, else why not. */
export function refusal(address: string, allowPrivate: boolean): string | null {
  const verdict = judgeAddress(address);
  if (verdict === 'forbidden') return `${address} is a link-local, unspecified or non-unicast address and is never contacted`;
  if (verdict === 'private' && !allowPrivate) return `${address} is a loopback or private address; the operator has not allowed private targets (ALLOW_PRIVATE_TARGETS)`;
  return null;
}

/** The hostname of a URL as an IP literal without brackets, or null when it is a name. */
export function ipLiteral(hostname: string): string | null {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) ? bare : null;
}
