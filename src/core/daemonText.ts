/**
 * How the CLI (`maestro daemons`, `maestro doctor`) and the board's Daemons screen say a daemon's settings, its clock
 * and what its sandbox leaves open, one rule for each. No zod here: the board imports it (web/src/api/types.ts), and each side escapes the text its own way.
 */
import type { DaemonSettings } from './daemonSettings.js';

/** A setting's value as the CLI and the board say it: durations in seconds, the rest as written (each escapes it). */
export function settingText(key: keyof DaemonSettings, value: DaemonSettings[keyof DaemonSettings]): string {
  return (key === 'leaseMs' || key === 'tickMs') && typeof value === 'number' ? `${value / 1000} s` : String(value);
}

/** Below this a daemon's clock and the database's agree as far as the listing's whole seconds go: not said. */
export const CLOCK_SKEW_WORTH_SAYING_MS = 2_000;

/** A sandbox's network mode (agentSandbox.network) as the start line, doctor and the board say it; `upstream`: the host's own proxy Maestro's goes through. */
export function networkSaid(mode: 'shared' | 'proxied' | 'none' | undefined, upstream?: string): string {
  switch (mode ?? 'shared') {
    case 'shared':
      return "network: shared (the host's, its loopback and private networks too)";
    case 'proxied':
      return `network: proxied (public hosts on ports 443 and 80 through Maestro's proxy${upstream ? `, then the host's proxy ${upstream}` : ''}, and agentSandbox.allow)`;
    case 'none':
      return 'network: none (its own loopback only)';
    default:
      return `network: ${String(mode)}`;
  }
}

/** What a sandbox without its abstract sockets scoped leaves open, and why. */
export function socketsWarning(why: string): string {
  return `agents in the sandbox can reach abstract sockets made outside it (an X11 display's, which types into your windows): ${why}`;
}
