/**
 * Runs a shell hook: `/bin/sh <script>` in its own process group, the context
 * as JSON on stdin. Exit 0 continues; any other exit cancels with stdout as
 * the reason. Past the timeout the whole group is killed, so a script that
 * started children of its own (`sleep 60 &`) leaves nothing behind; the group
 * is also killed after a normal exit, for the same reason.
 */
import { spawn } from 'node:child_process';
import { dirname } from 'node:path';
import { trackResource } from '../lib/resources.js';
import { sandboxed, type RunSandbox } from '../lib/sandbox.js';

export type ShellAnswer =
  | { kind: 'exited'; code: number; stdout: string; stderr: string }
  | { kind: 'timeout'; stdout: string }
  | { kind: 'crashed'; message: string };

/** Output beyond this is dropped: a reason or a plan, not a log. */
const MAX_OUTPUT = 1024 * 1024;

function killGroup(pid: number | undefined): void {
  if (!pid) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // the group is already gone
  }
}

/** `sandbox`: a project's hook runs in the agent sandbox (src/lib/sandbox.ts); the user's own run as the user. */
export function runShellHook(script: string, context: unknown, timeoutMs: number, env: NodeJS.ProcessEnv, sandbox?: RunSandbox): Promise<ShellAnswer> {
  return new Promise((resolve) => {
    const start = sandboxed(sandbox, dirname(script), '/bin/sh', [script]);
    const child = spawn(start.file, start.args, { cwd: dirname(script), detached: true, stdio: ['pipe', 'pipe', 'pipe'], env });
    const release = trackResource('process', `hook ${script}`, () => killGroup(child.pid));
    let stdout = '';
    let stderr = '';
    let settled = false;
    const finish = (answer: ShellAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      killGroup(child.pid);
      release();
      resolve(answer);
    };
    const timer = setTimeout(() => finish({ kind: 'timeout', stdout }), timeoutMs);
    child.stdout.on('data', (d: Buffer) => {
      if (stdout.length < MAX_OUTPUT) stdout += d.toString('utf8');
    });
    child.stderr.on('data', (d: Buffer) => {
      if (stderr.length < MAX_OUTPUT) stderr += d.toString('utf8');
    });
    child.on('error', (err) => finish({ kind: 'crashed', message: err.message }));
    // When the script exits, its group goes too: a child it left running in the background
    // would otherwise hold stdout open. 'close' then comes once everything printed is read.
    let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      killGroup(child.pid);
    });
    child.on('close', () => {
      const e = exit ?? { code: null, signal: null };
      if (e.code === null) finish({ kind: 'crashed', message: `killed by ${e.signal ?? 'a signal'}` });
      else finish({ kind: 'exited', code: e.code, stdout, stderr });
    });
    // A script that does not read its stdin closes the pipe early; that is its right.
    child.stdin.on('error', () => {});
    child.stdin.end(`${JSON.stringify(context)}\n`);
  });
}
