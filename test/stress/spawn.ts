/** Spawns claimer processes (tracked as resources) and collects their JSON output. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { trackResource } from '../../src/lib/resources.js';
import { scriptArgs } from '../helpers/script.js';

const CLAIMER = fileURLToPath(new URL('./claimer.ts', import.meta.url));

export interface ClaimerOutput {
  owner: string;
  won: string[];
  attempts: number;
  ms: number;
  /** CPU time the claimer used while claiming (user + system). */
  cpuMs: number;
  /** Its context switches while claiming (voluntary and involuntary). */
  switches: number;
  rssMb: number;
}

/**
 * Starts `n` claimers, waits until all have loaded, then releases them at once
 * so that they really contend. Resolves with each one's parsed last line.
 * `onGo` runs just before they are released (to read a server's CPU from there).
 */
export async function runClaimers<T = ClaimerOutput>(n: number, args: (i: number) => string[], onGo?: () => void): Promise<T[]> {
  const children = Array.from({ length: n }, (_, i) => {
    const child = spawn(process.execPath, [...scriptArgs(CLAIMER), ...args(i)], {
      env: { ...process.env, MAESTRO_WAIT_GO: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const untrack = trackResource('process', `claimer ${i} (pid ${child.pid})`, () => child.kill('SIGKILL'));
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const ready = new Promise<void>((resolve, reject) => {
      const onData = () => {
        if (out.includes('ready\n')) {
          child.stdout.off('data', onData);
          resolve();
        }
      };
      child.stdout.on('data', onData);
      child.once('exit', (code) => reject(new Error(`claimer ${i} exited ${code} before it was ready: ${err}`)));
    });
    const done = new Promise<T>((resolve, reject) => {
      // 'close', not 'exit': a process may exit before its last stdout line has been read here (CI176 saw only
      // "ready", JSON.parse threw in the handler and the test hung until its timeout).
      child.once('close', (code) => {
        untrack();
        if (code !== 0) return reject(new Error(`claimer ${i} exited ${code}: ${err}`));
        const last = out.trim().split('\n').pop()!;
        try {
          resolve(JSON.parse(last) as T);
        } catch {
          reject(new Error(`claimer ${i} ended without its result line; its output: ${out} ${err}`));
        }
      });
    });
    return { child, ready, done };
  });
  await Promise.all(children.map((c) => c.ready));
  onGo?.();
  for (const c of children) c.child.stdin.end('go\n');
  return Promise.all(children.map((c) => c.done));
}
