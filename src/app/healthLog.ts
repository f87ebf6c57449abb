import { dirname } from 'node:path';
import pino, { type Logger } from 'pino';
import type { MaestroConfig } from '../config/config.js';
import { HealthMonitor, type HealthReport } from '../daemon/health.js';
import { sqlitePath } from '../daemon/homeCheck.js';
import { LogFile } from '../daemon/logSink.js';

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
