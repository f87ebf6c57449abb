/** What `startDaemon` takes besides the resolved configuration: where it logs, timings tests shorten, optional parts. */
import type { FastifyInstance } from 'fastify';
import type { OpenApiDoc } from '../api/route.js';
import type { Env } from '../config/env.js';
import type { OrchestratorHooks } from '../daemon/orchestrator.js';
import type { DemoOptions } from '../demo/demo.js';
import type { ObserverConfig } from '../observer/config.js';
import type { ObserverEvents } from '../observer/events.js';

export interface DaemonOptions {
  /**
   * The environment the daemon's parts are configured from (knowledge, observer, the default provider's
   * credentials): `maestro serve` passes the one its entry read; none when not given. Workers and hooks get
   * an allowlist of the process's own (src/lib/agentEnv.ts), never this.
   */
  env?: Env;
  /** Extra route plugins (the knowledge and observer APIs, the web board). */
  plugins?: ((app: FastifyInstance, doc: OpenApiDoc) => Promise<void> | void)[];
  /** Where log lines go; stdout by default. */
  logDestination?: NodeJS.WritableStream;
  /** A log file instead (`maestro serve`): a failed write (full disk) is a health condition, not a crash. */
  logFile?: string;
  /** How often the health probe looks at the disk (5 s). */
  healthProbeMs?: number;
  /** How often the database's schema version is read: a newer one (another daemon upgraded) pauses claims (30 s; daemon/schemaWatch.ts). */
  schemaCheckMs?: number;
  /** How long after a failed clone or fetch of a project's shared remote it is tried again (10 s). */
  remoteRetryMs?: number;
  /** How long a clone, fetch or push of a shared remote may go without a word from git before it is stopped (2 min). */
  gitStallMs?: number;
  /**
   * What a POST /api/daemon/stop (`maestro stop`) does, once the daemon is up: `maestro serve` stops as at its first
   * SIGTERM, then exits. By default the daemon's own stop() (the same grace).
   */
  onStopRequest?: (daemon: { stop(opts?: { graceMs?: number }): Promise<void> }) => Promise<void> | void;
  /** Print the "daemon on …" line (the CLI does; tests do not). */
  announce?: boolean;
  hooks?: OrchestratorHooks;
  /** Environment for worker processes. */
  workerEnv?: NodeJS.ProcessEnv;
  workerSilenceMs?: number;
  heartbeatMs?: number;
  /** How long a hook may run before it counts as a cancel (5 s). */
  hookTimeoutMs?: number;
  /** Do not start the orchestrator loop (API-only tests). */
  noOrchestrator?: boolean;
  /** The event feed's poll while PostgreSQL LISTEN is up (default 2 s; tests raise it to prove NOTIFY alone delivers). */
  listeningPollMs?: number;
  /** With no project registered, create the offline demo project (`maestro serve` does). */
  demo?: boolean | DemoOptions;
  /** The observer's configuration (default: from the environment and cwd). */
  observer?: ObserverConfig;
  /** Keep the workspace's newest Claude Code transcript live in the daemon (default: MAESTRO_OBSERVER_FOLLOW). */
  observerFollow?: boolean;
  /** Where the observer publishes its updates (default: an emitter of the ObserverService's own); a test emits on it. */
  observerEvents?: ObserverEvents;
}
