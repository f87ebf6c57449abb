/**
 * Which addresses the sandbox's proxy (proxy.ts) refuses to connect to: every one that reaches the host itself or a
 * network behind it rather than the public internet. The host's loopback (a Redis, a database, a browser's DevTools
 * port: code outside the sandbox), private and carrier-grade NAT ranges (the office, other VMs), link-local (the
 * cloud metadata endpoint at 169.254.169.254 hands out the VM's credentials), unique-local, multicast, unspecified
 * (0.0.0.0 and :: reach the host's own loopback listeners) and reserved ranges. An IPv6 address that carries an
 * IPv4 one (mapped ::ffff:a.b.c.d, compatible ::a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16) is judged by that one.
 */
import { isIPv4, isIPv6 } from 'node:net';

/** IPv4 ranges as [first octets' value, prefix length, what it is]. */
const V4_BLOCKED: Array<[string, number, string]> = [
  ['0.0.0.0', 8, 'unspecified'],
  ['127.0.0.0', 8, 'loopback'],
  ['10.0.0.0', 8, 'private'],
  ['172.16.0.0', 12, 'private'],
  ['192.168.0.0', 16, 'private'],
  ['100.64.0.0', 10, 'private (carrier-grade NAT)'],
  ['169.254.0.0', 16, 'link-local'],
  ['192.0.0.0', 24, 'reserved'],
  ['198.18.0.0', 15, 'reserved'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'], // and the broadcast address 255.255.255.255
];

const v4Number = (address: string): number => address.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);

/** Whether the IPv4 `address` lies in the block `base`/`bits` (both dotted). */
export function inV4Block(address: string, base: string, bits: number): boolean {
  const size = 2 ** (32 - Math.min(32, bits));
  return Math.floor(v4Number(address) / size) === Math.floor(v4Number(base) / size);
}

function v4Kind(address: string): string | null {
  return V4_BLOCKED.find(([base, bits]) => inV4Block(address, base, bits))?.[2] ?? null;
}

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part becomes two), its zone left out. */
function v6Groups(address: string): number[] {
  let text = address.split('%')[0]!.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const n = v4Number(dotted[1]!);
    text = `${text.slice(0, -dotted[1]!.length)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, null];
  const part = (s: string | null | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const left = part(head);
  const right = part(tail);
  return tail === null ? left : [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}

const v4Of = (hi: number, lo: number) => [hi >>> 8, hi & 0xff, lo >>> 8, lo & 0xff].join('.');

function v6Kind(address: string): string | null {
  const g = v6Groups(address);
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 8)) return 'unspecified';
  if (zeros(0, 7) && g[7] === 1) return 'loopback';
  // An IPv4 address carried in the IPv6 one: mapped, compatible, NAT64 or 6to4 reach it.
  if (zeros(0, 5) && g[5] === 0xffff) return v4Kind(v4Of(g[6]!, g[7]!));
  if (zeros(0, 6)) return v4Kind(v4Of(g[6]!, g[7]!));
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return v4Kind(v4Of(g[6]!, g[7]!));
  if (g[0] === 0x2002) return v4Kind(v4Of(g[1]!, g[2]!));
  if ((g[0]! & 0xffc0) === 0xfe80) return 'link-local';
  if ((g[0]! & 0xffc0) === 0xfec0) return 'private (site-local)';
  if ((g[0]! & 0xfe00) === 0xfc00) return 'unique-local';
  if ((g[0]! & 0xff00) === 0xff00) return 'multicast';
  return null;
}

/**
 * Why the proxy must not connect to `address` (an IP address as DNS answers it), or null for a public one:
 * "loopback", "private", "link-local", "unique-local", "multicast", "unspecified", "reserved" and the like.
 * Anything not an IP address is refused as "not an IP address".
 */
export function blockedAddressKind(address: string): string | null {
  if (isIPv4(address)) return v4Kind(address);
  if (isIPv6(address)) return v6Kind(address);
  return 'not an IP address';
}
