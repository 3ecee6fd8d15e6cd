import { isIP, isIPv6 } from 'node:net';

/**
 * `TRUST_PROXY`: false (the socket's peer is the client), true or a number
 * of proxy hops, or the addresses/CIDRs of the proxies themselves.
 */
export type TrustProxySetting = boolean | number | string[];

/**
 * The Fastify `trustProxy` option for a setting. With hops, the client is
 * the address that many hops back from this process: with one proxy in
 * front, the last X-Forwarded-For entry, the one that proxy appended; earlier
 * entries are whatever the client claimed and are never used. (Fastify's own
 * numeric option trusts nothing since v5, hence the function.) With a list,
 * the client is the last entry not sent by a listed proxy.
 */
export function trustProxyOption(setting: TrustProxySetting): false | string[] | ((address: string, hop: number) => boolean) {
  if (Array.isArray(setting)) return setting.length > 0 ? setting : false;
  const hops = setting === true ? 1 : setting === false ? 0 : setting;
  if (hops <= 0) return false;
  return (_address: string, hop: number) => hop < hops;
}

/** Parses TRUST_PROXY; null when the value is none of the accepted forms. */
export function parseTrustProxy(value: string): TrustProxySetting | null {
  if (/^(1|true|yes|on)$/i.test(value)) return true;
  if (/^(0|false|no|off)$/i.test(value)) return false;
  if (/^\d{1,2}$/.test(value)) return Number(value);
  const entries = value.split(',').map((e) => e.trim()).filter(Boolean);
  const valid = entries.every((entry) => {
    const [address, bits, ...rest] = entry.split('/');
    if (rest.length > 0 || !address || !isIP(address)) return false;
    return bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (isIPv6(address) ? 128 : 32));
  });
  return entries.length > 0 && valid ? entries : null;
}

/**
 * The per-IP bucket a client address falls in. IPv4 (also IPv4-mapped IPv6)
 * counts per address; IPv6 per /64, because one host is routinely handed a
 * whole /64 and could otherwise start a fresh bucket for every request.
 */
export function clientBucketId(ip: string | undefined): string {
  // A socket that closed before the first hook has no address left; such requests share one bucket.
  if (!ip) return 'unknown';
  if (!ip.includes(':')) return ip;
  const address = ip.toLowerCase().split('%')[0]!;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (mapped) return mapped[1]!;
  if (!isIPv6(address)) return address;
  const [head, tail] = address.split('::');
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const width = (groups: string[]) => groups.reduce((n, g) => n + (g.includes('.') ? 2 : 1), 0);
  const zeros = tail === undefined ? [] : Array<string>(8 - width(headGroups) - width(tailGroups)).fill('0');
  const groups = [...headGroups, ...zeros, ...tailGroups].slice(0, 4);
  return `${groups.map((g) => (g.includes('.') ? g : parseInt(g, 16).toString(16))).join(':')}::/64`;
}
