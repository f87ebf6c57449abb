/**
 * execOnce: one short command (git, mostly) run to its end, its output collected, and
 * every way it can end written down as data instead of an Error, so the answer can cross
 * a process boundary unchanged (the spawner's helper runs it; spawner.ts). The caller
 * passes the whole environment: nothing is taken from the process that runs it.
 */
import { spawn, type ChildProcess } from 'node:child_process';

export interface ExecRequest {
  file: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Bytes of stdout or stderr past which the command is killed and the call fails. */
  maxBuffer: number;
  /** Written to stdin, which is then closed; without it stdin is closed at once. */
  input?: string;
  /**
   * A command that talks to another machine: stopped when it writes nothing on stdout or stderr for this
   * long (git asked for `--progress` writes while data moves). It runs in a process group of its own,
   * and the whole group is stopped: git's helpers (ssh, git-remote-https) hold the connection.
   */
  stallMs?: number;
  /** How stdout and stderr are read: 'latin1' keeps every byte as the char of its code (a blob that is not UTF-8). */
  encoding?: 'utf8' | 'latin1';
}

export interface ExecOutcome {
  stdout: string;
  stderr: string;
  /** The exit code; null when a signal ended it or it never started. */
  code: number | null;
  signal: string | null;
  /** Why it failed other than by its exit code: ENOENT (no such binary or folder), ERR_CHILD_PROCESS_STDIO_MAXBUFFER, STALLED (`stallMs`), … */
  errno?: string;
  message?: string;
}

export function execOnce(req: ExecRequest): Promise<ExecOutcome> {
  return new Promise((resolve) => {
    // Its own process group when it may be stopped: the whole group is (git's helpers hold the connection).
    const child = spawn(req.file, req.args, { cwd: req.cwd, env: req.env, detached: req.stallMs !== undefined, stdio: 'pipe' });
    const out = { stdout: '', stderr: '' };
    let failure: Pick<ExecOutcome, 'errno' | 'message'> | null = null;
    const stop = (why: Pick<ExecOutcome, 'errno' | 'message'>) => {
      if (failure) return;
      failure = why;
      killGroup(child, req.stallMs !== undefined);
      // Nothing more is read: a process it started that still writes (sh's child) meets a closed pipe.
      child.stdout.destroy();
      child.stderr.destroy();
    };
    const stall = req.stallMs === undefined ? null : stallTimer(req.stallMs, () => stop({ errno: 'STALLED', message: `nothing from it for ${req.stallMs! / 1000} s, stopped` }));
    for (const name of ['stdout', 'stderr'] as const) {
      child[name].on('error', () => {}); // destroyed after a stop
      child[name].setEncoding(req.encoding ?? 'utf8').on('data', (chunk: string) => {
        stall?.again();
        out[name] += chunk;
        if (out[name].length > req.maxBuffer) stop({ errno: 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER', message: `${name} maxBuffer length exceeded` });
      });
    }
    child.on('error', (err: NodeJS.ErrnoException) => {
      stall?.stop();
      resolve({ ...out, code: null, signal: null, errno: err.code ?? 'ERROR', message: err.message });
    });
    child.on('close', (code, signal) => {
      stall?.stop();
      resolve({ ...out, code, signal, ...failure });
    });
    // A closed stdin: a command that would wait for input reads end-of-file instead of hanging.
    child.stdin.on('error', () => {});
    child.stdin.end(req.input);
  });
}

/** Calls `onStall` once `stallMs` pass without `again()`. */
function stallTimer(stallMs: number, onStall: () => void): { again(): void; stop(): void } {
  let timer = setTimeout(onStall, stallMs);
  return {
    again() {
      clearTimeout(timer);
      timer = setTimeout(onStall, stallMs);
    },
    stop: () => clearTimeout(timer),
  };
}

/** SIGKILL to the child, or to its whole process group when it leads one. */
function killGroup(child: ChildProcess, group: boolean): void {
  try {
    if (group && child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    else child.kill('SIGKILL');
  } catch {
    // ended meanwhile
  }
}
