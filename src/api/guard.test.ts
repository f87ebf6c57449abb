import { hostname, networkInterfaces } from 'node:os';
import { describe, expect, it } from 'vitest';
import { allowedHostNames, hostNameOf } from './guard.js';

describe('the Host check', () => {
  it('reads the host name out of a Host header, IPv6 and case included', () => {
    expect(hostNameOf('127.0.0.1:4300')).toBe('127.0.0.1');
    expect(hostNameOf('[::1]:4300')).toBe('::1');
    expect(hostNameOf('LocalHost')).toBe('localhost');
    expect(hostNameOf('evil.example:4300')).toBe('evil.example');
    expect(hostNameOf('a b')).toBeNull();
    expect(hostNameOf('evil.example/@127.0.0.1')).toBeNull();
    expect(hostNameOf('127.0.0.1/@evil.example')).toBeNull();
    expect(hostNameOf('evil.example@127.0.0.1')).toBeNull();
    expect(hostNameOf('127.0.0.1:4300:1')).toBeNull();
    expect(hostNameOf(undefined)).toBeNull();
  });

  it('answers to loopback always, the bound host, the machine itself on a wildcard bind, and allowedHosts', () => {
    const loopback = allowedHostNames({ host: '127.0.0.1', allowedHosts: [] });
    expect([...loopback].sort()).toEqual(['127.0.0.1', '::1', 'localhost']);
    expect(allowedHostNames({ host: '10.1.2.3', allowedHosts: ['Maestro.Example', '[fd00::1]'] })).toEqual(new Set(['127.0.0.1', 'localhost', '::1', '10.1.2.3', 'maestro.example', 'fd00::1']));
    const wildcard = allowedHostNames({ host: '0.0.0.0', allowedHosts: [] });
    expect(wildcard.has(hostname().toLowerCase())).toBe(true);
    for (const a of Object.values(networkInterfaces()).flat()) if (a) expect(wildcard.has(a.address.toLowerCase())).toBe(true);
    expect(wildcard.has('evil.example')).toBe(false);
  });
});
