/**
 * Another process holding `.workflow` locks, as a person's CLI does (test/knowledge/lockHolderProcess.ts): started,
 * and resolved once it holds them; `release()` lets it go on (its work under the locks, then their release) and
 * gives its exit. Calling it again, or after the child died, only gives the exit.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { scriptArgs } from './script.js';

const HOLDER = join(import.meta.dirname, '..', 'knowledge', 'lockHolderProcess.ts');

export async function lockHolder(args: string[]): Promise<{ release: () => Promise<{ code: number | null; stdout: string; stderr: string }> }> {
  const child = spawn(process.execPath, [...scriptArgs(HOLDER), ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  child.stdin.on('error', () => {}); // a child that died: its exit says so
  const exited = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  const holding = new Promise<boolean>((resolve) => {
    child.stdout.on('data', (d) => {
      stdout += d;
      if (stdout.includes('HELD\n')) resolve(true);
    });
    void exited.then(() => resolve(false));
  });
  if (!(await holding)) throw new Error(`the lock holder ended before it held its locks: ${stderr}`);
  return {
    release: () => {
      if (!child.stdin.writableEnded) child.stdin.end('go\n');
      return exited;
    },
  };
}
