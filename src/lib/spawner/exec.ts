/**
 * execOnce: one short command (git, mostly) run to its end, its output collected, and
 * every way it can end written down as data instead of an Error, so the answer can cross
 * a process boundary unchanged (the spawner's helper runs it; spawner.ts). The caller
 * passes the whole environment: nothing is taken from the process that runs it.
 */
import { execFile } from 'node:child_process';

export interface ExecRequest {
  file: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Bytes of stdout or stderr past which the command is killed and the call fails. */
  maxBuffer: number;
  /** Written to stdin, which is then closed; without it stdin is closed at once. */
  input?: string;
}

export interface ExecOutcome {
  stdout: string;
  stderr: string;
  /** The exit code; null when a signal ended it or it never started. */
  code: number | null;
  signal: string | null;
  /** Why it failed other than by its exit code: ENOENT (no such binary or folder), ERR_CHILD_PROCESS_STDIO_MAXBUFFER, … */
  errno?: string;
  message?: string;
}

export function execOnce(req: ExecRequest): Promise<ExecOutcome> {
  return new Promise((resolve) => {
    const child = execFile(req.file, req.args, { cwd: req.cwd, env: req.env, maxBuffer: req.maxBuffer, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (!err) return resolve({ stdout, stderr, code: 0, signal: null });
      const e = err as NodeJS.ErrnoException & { code?: string | number | null; signal?: string | null };
      const code = typeof e.code === 'number' ? e.code : null;
      resolve({
        stdout,
        stderr,
        code,
        signal: e.signal ?? null,
        ...(typeof e.code === 'string' ? { errno: e.code, message: e.message } : {}),
      });
    });
    // A closed stdin: a command that would wait for input reads end-of-file instead of hanging.
    child.stdin?.on('error', () => {});
    child.stdin?.end(req.input);
  });
}
