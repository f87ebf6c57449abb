/** The proxy's address classifier: what reaches the host or a network behind it, in every form an address takes. */
import { describe, expect, it } from 'vitest';
import { blockedAddressKind } from './addresses.js';

describe('blockedAddressKind', () => {
  it('IPv4: loopback, private, carrier-grade NAT, link-local, multicast, unspecified and reserved, to their edges', () => {
    const cases: Array<[string, string | null]> = [
      ['127.0.0.1', 'loopback'], ['127.255.255.255', 'loopback'], ['126.255.255.255', null], ['128.0.0.1', null],
      ['10.0.0.0', 'private'], ['10.255.255.255', 'private'], ['11.0.0.0', null], ['9.255.255.255', null],
      ['172.16.0.0', 'private'], ['172.31.255.255', 'private'], ['172.15.255.255', null], ['172.32.0.0', null],
      ['192.168.0.1', 'private'], ['192.169.0.1', null], ['192.167.255.255', null],
      ['100.64.0.0', 'private (carrier-grade NAT)'], ['100.127.255.255', 'private (carrier-grade NAT)'], ['100.63.255.255', null], ['100.128.0.0', null],
      ['169.254.169.254', 'link-local'], ['169.254.0.0', 'link-local'], ['169.255.0.0', null],
      ['0.0.0.0', 'unspecified'], ['0.1.2.3', 'unspecified'],
      ['224.0.0.1', 'multicast'], ['239.255.255.255', 'multicast'], ['223.255.255.255', null],
      ['240.0.0.1', 'reserved'], ['255.255.255.255', 'reserved'], ['198.18.0.1', 'reserved'], ['192.0.0.8', 'reserved'],
      ['8.8.8.8', null], ['1.1.1.1', null], ['140.82.112.3', null],
    ];
    for (const [address, kind] of cases) expect([address, blockedAddressKind(address)]).toEqual([address, kind]);
  });

  it('IPv6: loopback, unspecified, link-local, unique-local, site-local, multicast; public ones pass', () => {
    const cases: Array<[string, string | null]> = [
      ['::1', 'loopback'], ['0:0:0:0:0:0:0:1', 'loopback'], ['::', 'unspecified'],
      ['fe80::1', 'link-local'], ['fe80::1%eth0', 'link-local'], ['febf:ffff::1', 'link-local'], ['fec0::1', 'private (site-local)'],
      ['fc00::1', 'unique-local'], ['fd12:3456::1', 'unique-local'], ['fbff::1', null],
      ['ff02::1', 'multicast'], ['FF05::2', 'multicast'],
      ['2606:4700:4700::1111', null], ['2001:4860:4860::8888', null],
    ];
    for (const [address, kind] of cases) expect([address, blockedAddressKind(address)]).toEqual([address, kind]);
  });

  it('an IPv4 address inside an IPv6 one (mapped, compatible, NAT64, 6to4) is judged as that IPv4 address', () => {
    const cases: Array<[string, string | null]> = [
      ['::ffff:127.0.0.1', 'loopback'], ['::ffff:7f00:1', 'loopback'], ['::FFFF:169.254.169.254', 'link-local'], ['::ffff:a9fe:a9fe', 'link-local'],
      ['::ffff:10.1.2.3', 'private'], ['::ffff:8.8.8.8', null], ['::127.0.0.1', 'loopback'], ['::0.0.0.2', 'unspecified'],
      ['64:ff9b::192.168.1.1', 'private'], ['64:ff9b::8.8.8.8', null], ['2002:7f00:1::', 'loopback'], ['2002:0808:0808::1', null],
    ];
    for (const [address, kind] of cases) expect([address, blockedAddressKind(address)]).toEqual([address, kind]);
  });

  it('what is not an IP address is refused', () => {
    expect(blockedAddressKind('localhost')).toBe('not an IP address');
    expect(blockedAddressKind('')).toBe('not an IP address');
  });
});
