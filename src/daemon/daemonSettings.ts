/** What this daemon runs with, as it registers on the database for the others to compare (core/daemonSettings.ts). */
import { MAESTRO_VERSION, type DaemonSettings } from '../core/daemonSettings.js';
import type { MaestroConfig } from '../config/config.js';

/** From the resolved config; `agentSandbox` as settled at start (null: agents run unsandboxed, chosen or not). */
export function settingsOf(config: MaestroConfig): DaemonSettings {
  return {
    version: MAESTRO_VERSION,
    node: process.version,
    leaseMs: config.leaseMs,
    tickMs: config.tickMs,
    maxConcurrentRuns: config.maxConcurrentRuns,
    maxConcurrentRunsPerProject: config.maxConcurrentRunsPerProject,
    reservedConflictSlots: config.reservedConflictSlots,
    warmWorkers: config.warmWorkers,
    agentSandbox: config.agentSandbox ? 'bwrap' : 'off',
  };
}
