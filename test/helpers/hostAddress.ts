/**
 * An address of this host that is not its loopback, for a model stand-in that a "proxied" sandbox may reach only
 * through Maestro's proxy: inside, 127.0.0.1 is the sandbox's own loopback (and in NO_PROXY), and no other interface
 * exists, so a tool that ignored the proxy variables would find no route. Being this host's, it is private or
 * reserved: the proxy lets it through only with an `agentSandbox.allow` entry. On a machine without one the
 * suites say so loudly and skip those cases; in CI it is a failure.
 */
import { networkInterfaces } from 'node:os';

export function outsideAddress(): string | null {
  const found = Object.values(networkInterfaces()).flat().find((i) => i && i.family === 'IPv4' && !i.internal);
  if (found) return found.address;
  const why = 'this host has no IPv4 address besides its loopback';
  if (process.env.CI) throw new Error(`CI must run the agents through the "proxied" sandbox network, but ${why}`);
  process.stderr.write(`\n*** ${why}: the "proxied" network cases of the real-agent suites are SKIPPED on this machine. ***\n`);
  return null;
}
