/**
 * The executor's check gates (lint, typecheck, build, test, or whatever the
 * project configures in `.maestro/`): each runs on its own in the worktree, its
 * whole output kept in `<runDir>/checks/<name>.log`, a timeout ending its
 * process group. A check is a gate: the first failure stops the task.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { childEnv } from '../lib/agentEnv.js';
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

/** `sandbox`: the run's (src/lib/sandbox.ts): a check runs the worktree's own scripts, which the agent wrote. */
export function runCheck(check: CheckConfig, cwd: string, logDir: string, defaultTimeoutMs: number, signal: AbortSignal, sandbox?: RunSandbox): Promise<CheckOutcome> {
  mkdirSync(logDir, { recursive: true });
  const logPath = join(logDir, `${check.name}.log`);
  const fd = openSync(logPath, 'w');
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
      closeSync(fd);
      const log = readFileSync(logPath, 'utf8');
      resolve({
        name: check.name,
        ok: exitCode === 0 && !timedOut,
        exitCode,
        timedOut,
        durationMs: Date.now() - started,
        logPath,
        tail: log.split('\n').slice(-40).join('\n').slice(-4000),
      });
    };
    child.once('error', (err) => done(null, `could not start: ${err.message}`));
    child.once('exit', (code, sig) => done(code, timedOut ? `[maestro] timed out after ${timeoutMs} ms` : sig ? `[maestro] ended by ${sig}` : ''));
  });
}
