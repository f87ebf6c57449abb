/**
 * The built-in configuration defaults, apart from config.ts so that code
 * needing only a default (the CLI's API client) does not load zod with it.
 */
const SECOND = 1000;

/** The log levels pino knows; MAESTRO_LOG_LEVEL and config.json's logLevel take one. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const DEFAULTS = {
  host: '127.0.0.1',
  port: 4300,
  /** How long a claim holds without a heartbeat before another may take the task. */
  leaseMs: 60 * SECOND,
  /** How often the daemon ticks (claim → spawn/reap → ingest → merge). */
  tickMs: 1 * SECOND,
  maxConcurrentRuns: 4,
  maxConcurrentRunsPerProject: 2,
  /** Worker slots kept free for conflict runs, ahead of ordinary work. */
  reservedConflictSlots: 1,
  /** Idle worker processes kept ready for the next run: a cold Node start costs more CPU than a zero-latency run itself. */
  warmWorkers: 2,
  /** Runs yield the CPU to the daemon and the person: 10 is `nice`'s own default. */
  workerNice: 10,
  logLevel: 'info' as (typeof LOG_LEVELS)[number],
};
