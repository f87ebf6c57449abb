/**
 * The executor's check gates (lint, typecheck, build, test, or whatever the
 * project configures in `.maestro/`): each runs on its own in the worktree, its
 * whole output kept in `<runDir>/checks/<name>.log`, a timeout ending its
 * process group. A check is a gate: the first failure stops the task.
 *
 * The log is written only as a file of its own: a symbolic link found in its
 * place, or as the checks folder, is refused, never followed (a plain 'w' open
 * emptied and overwrote whatever it pointed to). The check is then not run, and
 * fails with CHECK_FAILED naming the link and where it leads.
 */
import { spawn } from 'node:child_process';
import { closeSync, fstatSync, mkdirSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { MaestroError } from '../core/errors.js';
import { childEnv } from '../lib/agentEnv.js';
import { isLink } from '../lib/paths.js';
import { LinkRefused, openRegularForWrite } from '../lib/regularFile.js';
import { trackResource } from '../lib/resources.js';
import { sandboxed, type RunSandbox } from '../lib/sandbox.js';
import type { CheckConfig } from './protocol/job.js';

export interface CheckOutcome {
  name: string;
  ok: boolean;
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  logPath: string;
  /** The last lines of the log, for the error record and the next try's prompt. */
  tail: string;
}

const KILL_GRACE_MS = 2000;
/** What is read back from the end of a log for its tail (40 lines, at most 4,000 characters of them). */
const TAIL_BYTES = 64 * 1024;

/**
 * The check's log, created or emptied: a descriptor, or CHECK_FAILED saying why the log cannot be written (a link in
 * its place or as the folder, a FIFO, a file where the folder should be) and that the check was not run.
 */
function openLog(check: CheckConfig, logDir: string, logPath: string): number {
  try {
    mkdirSync(logDir, { recursive: true });
    // O_NOFOLLOW guards the log's own name only; a linked folder would take the write elsewhere as well.
    if (isLink(logDir)) throw new LinkRefused(logDir);
    return openRegularForWrite(logPath);
  } catch (err) {
    const problem = (err as Error).message;
    throw new MaestroError('CHECK_FAILED', `check ${check.name} was not run: its log ${logPath} cannot be written: ${problem}. The run folder is the worker's own: find out what else wrote there`, {
      cause: err,
      details: { check: check.name, exitCode: null, timedOut: false, logPath, log: problem },
    });
  }
}

/** The last lines of the log, read through its own descriptor (never through a path something could have relinked). */
function tailOf(fd: number): string {
  const size = fstatSync(fd).size;
  const buf = Buffer.alloc(Math.min(size, TAIL_BYTES));
  const n = readSync(fd, buf, 0, buf.length, size - buf.length);
  return buf.subarray(0, n).toString('utf8').split('\n').slice(-40).join('\n').slice(-4000);
}

/** `sandbox`: the run's (src/lib/sandbox.ts): a check runs the worktree's own scripts, which the agent wrote. */
export function runCheck(check: CheckConfig, cwd: string, logDir: string, defaultTimeoutMs: number, signal: AbortSignal, sandbox?: RunSandbox): Promise<CheckOutcome> {
  const logPath = join(logDir, `${check.name}.log`);
  let fd: number;
  try {
    fd = openLog(check, logDir, logPath);
  } catch (err) {
    return Promise.reject(err);
  }
  const [file, args] = typeof check.command === 'string' ? ['/bin/sh', ['-c', check.command]] : [check.command[0]!, check.command.slice(1)];
  const timeoutMs = check.timeoutMs ?? defaultTimeoutMs;
  const started = Date.now();
  writeSync(fd, `$ ${typeof check.command === 'string' ? check.command : check.command.join(' ')}\n`);
  return new Promise((resolve) => {
    const start = sandboxed(sandbox, cwd, file, args);
    const child = spawn(start.file, start.args, { cwd, stdio: ['ignore', fd, fd], detached: true, env: { ...childEnv([]), CI: '1' } });
    const killGroup = (sig: NodeJS.Signals) => {
      try {
        if (child.pid) process.kill(-child.pid, sig);
      } catch {
        // gone already
      }
    };
    const release = trackResource('process', `check ${check.name} (pid ${child.pid})`, () => killGroup('SIGKILL'));
    let timedOut = false;
    let grace: NodeJS.Timeout | undefined;
    const stop = () => {
      killGroup('SIGTERM');
      grace = setTimeout(() => killGroup('SIGKILL'), KILL_GRACE_MS);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, timeoutMs);
    signal.addEventListener('abort', stop, { once: true });
    const done = (exitCode: number | null, note: string) => {
      clearTimeout(timer);
      if (grace) clearTimeout(grace);
      signal.removeEventListener('abort', stop);
      release();
      if (note) writeSync(fd, `\n${note}\n`);
      const tail = tailOf(fd);
      closeSync(fd);
      resolve({
        name: check.name,
        ok: exitCode === 0 && !timedOut,
        exitCode,
        timedOut,
        durationMs: Date.now() - started,
        logPath,
        tail,
      });
    };
    child.once('error', (err) => done(null, `could not start: ${err.message}`));
    child.once('exit', (code, sig) => done(code, timedOut ? `[maestro] timed out after ${timeoutMs} ms` : sig ? `[maestro] ended by ${sig}` : ''));
  });
}
