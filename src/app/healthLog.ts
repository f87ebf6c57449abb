import { dirname } from 'node:path';
import pino, { type Logger } from 'pino';
import type { MaestroConfig } from '../config/config.js';
import { HealthMonitor, type HealthCondition, type HealthReport } from '../daemon/health.js';
import { sqlitePath } from '../daemon/homeCheck.js';
import { LogFile } from '../daemon/logSink.js';
import type { Orchestrator } from '../daemon/orchestrator.js';
import type { Bus } from '../lib/bus.js';

/** The daemon options the health monitor and the log read. */
export interface LogOptions {
  logDestination?: NodeJS.WritableStream;
  logFile?: string;
  healthProbeMs?: number;
}

/** The health monitor, and the logger whose failed writes it hears of. */
export function healthAndLog(config: MaestroConfig, options: LogOptions, onChange: (report: HealthReport) => void): { health: HealthMonitor; log: Logger; closeLog: () => Promise<void> } {
  const health = new HealthMonitor({ dirs: [config.home, ...sqliteDir(config.database)], probeMs: options.healthProbeMs ?? 5000, now: Date.now, onChange });
  const { stream, close } = openLogDestination(options, (err) => health.notice(err, options.logFile));
  const log = pino({ level: config.logLevel, base: { pid: process.pid } }, stream as pino.DestinationStream);
  return { health, log, closeLog: close };
}

/** The folder of a SQLite database outside the home, whose disk the health probe watches too. */
function sqliteDir(url: string): string[] {
  const path = sqlitePath(url);
  return path ? [dirname(path)] : [];
}

/**
 * The log stream: a LogFile, or the given stream with an 'error' listener, so
 * that a failed log write (ENOSPC, EROFS, a closed pipe) is a health condition
 * and never an unhandled 'error' that ends the process.
 */
function openLogDestination(options: LogOptions, onFault: (err: Error) => void): { stream: NodeJS.WritableStream; close: () => Promise<void> } {
  if (options.logFile) {
    const file = new LogFile(options.logFile, onFault);
    file.on('error', () => {
      // a write after close at shutdown: nothing to report
    });
    return { stream: file, close: () => new Promise<void>((resolve) => file.end(() => resolve())) };
  }
  const stream = options.logDestination ?? process.stdout;
  const listener = (err: Error) => onFault(err);
  stream.on('error', listener);
  return { stream, close: async () => void stream.off('error', listener) };
}

/**
 * What a change of health does: a log line, a board event, and a kick when the disk takes writes again or a
 * shared remote answers again. A full disk or a read-only home pauses every claim; an unreachable remote
 * holds its own project's (the condition's message says which).
 */
export function healthReaction(log: Logger, bus: Bus, orchestrator: Orchestrator): (report: HealthReport) => void {
  const keyOf = (c: HealthCondition) => `${c.code}:${c.path}`;
  let said = new Map<string, HealthCondition>();
  return (report) => {
    const now = new Map(report.conditions.map((c) => [keyOf(c), c]));
    for (const [key, c] of now) if (!said.has(key)) log.warn({ condition: key }, HOLDS_ITS_PROJECT.has(c.code) ? c.message : `claiming new work paused: ${c.message}`);
    const cleared = [...said].filter(([key]) => !now.has(key)).map(([, c]) => c);
    for (const c of cleared) log.info(clearedLine(c));
    said = now;
    // Not stored (the disk may be full): straight to the board's WebSocket.
    bus.publishEvent({ id: 0, projectId: null, taskId: null, runId: null, traceId: null, type: 'daemon.health', payload: { ...report }, at: Date.now() });
    if (cleared.length) orchestrator.kick();
  };
}

/** Conditions of one project, which pause no claim elsewhere. */
const HOLDS_ITS_PROJECT = new Set(['REMOTE_UNREACHABLE', 'PROJECT_FOLDER_MISSING']);

function clearedLine(c: HealthCondition): string {
  if (c.code === 'REMOTE_UNREACHABLE') return `the shared remote ${c.path} answers again: its project's tasks are claimed again`;
  if (c.code === 'PROJECT_FOLDER_MISSING') return `the project folder ${c.path} is back: \`maestro task retry\` merges the approved work that waits`;
  if (c.code === 'SCHEMA_NEWER') return `the database ${c.path} has a schema this daemon knows again: claiming new work resumes`;
  return 'the disk takes writes again: claiming new work resumes';
}
