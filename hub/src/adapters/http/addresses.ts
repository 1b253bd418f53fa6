import { BlockList, isIP } from 'node:net';

/** `::ffff:10.0.0.5` (an IPv4 client on a dual-stack socket) is `10.0.0.5`. */
export function plainAddress(address: string | undefined): string {
  if (!address) return '';
  const m = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  return m ? (m[1] as string) : address;
}

function parse(entry: string): { ip: string; prefix: number | null; family: 4 | 6 } | null {
  const [ip = '', prefix, ...rest] = entry.trim().split('/');
  const family = isIP(ip);
  if (rest.length > 0 || (family !== 4 && family !== 6)) return null;
  if (prefix === undefined) return { ip, prefix: null, family };
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > (family === 4 ? 32 : 128)) return null;
  return { ip, prefix: Number(prefix), family };
}

/** True for an IPv4/IPv6 address or a CIDR block (`10.0.0.0/8`, `fd00::/8`). */
export function isAddressOrCidr(entry: string): boolean {
  return parse(entry) !== null;
}

/**
 * A set of addresses and CIDR blocks (the SSO proxies). Matches the TCP peer address of a request,
 * which the client cannot choose; headers such as X-Forwarded-For are never consulted.
 */
export class AddressSet {
  private readonly list = new BlockList();
  readonly size: number;

  constructor(entries: readonly string[]) {
    for (const e of entries) {
      const p = parse(e);
      if (!p) throw new Error(`not an IP address or CIDR: '${e}'`);
      const type = p.family === 4 ? 'ipv4' : 'ipv6';
      if (p.prefix === null) this.list.addAddress(p.ip, type);
      else this.list.addSubnet(p.ip, p.prefix, type);
    }
    this.size = entries.length;
  }

  has(address: string | undefined): boolean {
    const a = plainAddress(address);
    const family = isIP(a);
    if (family === 0) return false;
    return this.list.check(a, family === 4 ? 'ipv4' : 'ipv6');
  }
}
