/**
 * How the CLI (`maestro daemons`) and the board's Daemons screen say a daemon's settings and its clock, one rule for
 * both. No zod here: the board imports it (web/src/api/types.ts), and each side escapes the text its own way.
 */
import type { DaemonSettings } from './daemonSettings.js';

/** A setting's value as the CLI and the board say it: durations in seconds, the rest as written (each escapes it). */
export function settingText(key: keyof DaemonSettings, value: DaemonSettings[keyof DaemonSettings]): string {
  return (key === 'leaseMs' || key === 'tickMs') && typeof value === 'number' ? `${value / 1000} s` : String(value);
}

/** Below this a daemon's clock and the database's agree as far as the listing's whole seconds go: not said. */
export const CLOCK_SKEW_WORTH_SAYING_MS = 2_000;
