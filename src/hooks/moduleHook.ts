/**
 * Runs a module hook in a child process of its own, so that a hook that never
 * returns — even one stuck in a synchronous loop — can be stopped (killed), a
 * hook that crashes or calls process.exit() takes only its process down, and
 * the hook sees only the allowlisted environment: a worker thread shared the
 * daemon's process, whose /proc/self/environ holds the daemon's secrets.
 *
 * The child is sent the candidate files in precedence order. It imports each
 * module in turn (`.ts` through tsx's tsImport) and calls the first that
 * defines the hook; a shell candidate met first is handed back to the caller
 * to run. The child's code is a string (node -e) so it runs the same from the
 * sources, from dist/ and inside vitest, none of which share a loader.
 */
import { spawn } from 'node:child_process';
import { trackResource } from '../lib/resources.js';
import { sandboxed, type RunSandbox } from '../lib/sandbox.js';
import { HOOK_NAMES, type HookName } from './contract.js';

export type Candidate = { kind: 'module'; path: string } | { kind: 'shell'; path: string };

export type WorkerAnswer =
  | { kind: 'absent' }
  | { kind: 'shell'; path: string }
  | { kind: 'returned'; path: string; value: unknown }
  | { kind: 'threw'; path: string; message: string }
  | { kind: 'unclonable'; path: string; what: string }
  | { kind: 'load-error'; path: string; message: string }
  | { kind: 'timeout' }
  | { kind: 'crashed'; message: string };

const CHILD_CODE = `
const { pathToFileURL } = require('node:url');
const post = (m) => process.send(m);
const message = (err) => (err && err.message) ? String(err.message) : String(err);
process.once('message', async ({ candidates, name, args, names, tsxApi }) => {
  for (const c of candidates) {
    if (c.kind === 'shell') return post({ kind: 'shell', path: c.path });
    let ns;
    try {
      const url = pathToFileURL(c.path).href;
      if (c.path.endsWith('.ts')) {
        const { tsImport } = await import(tsxApi);
        ns = await tsImport(url, url);
      } else {
        ns = await import(url);
      }
    } catch (err) {
      return post({ kind: 'load-error', path: c.path, message: 'cannot be loaded: ' + message(err) });
    }
    // Hooks come from the default export (an object keyed by hook name) or from named exports
    // with those names; other named exports are the module's own helpers.
    const table = {};
    let def = ns.default;
    // A .ts file in a package without "type": "module" loads as CommonJS: unwrap its interop object.
    if (def && typeof def === 'object' && def.__esModule) {
      for (const key of names) if (key in def) table[key] = def[key];
      def = def.default;
    }
    if (def !== undefined) {
      if (typeof def !== 'object' || def === null) {
        return post({ kind: 'load-error', path: c.path, message: 'has a default export that is ' + typeof def + '; expected an object keyed by hook name' });
      }
      for (const key of Object.keys(def)) {
        if (!names.includes(key)) {
          return post({ kind: 'load-error', path: c.path, message: 'defines an unknown hook "' + key + '"; hooks are ' + names.join(', ') });
        }
        table[key] = def[key];
      }
    }
    for (const key of names) if (key in ns) table[key] = ns[key];
    const fn = table[name];
    if (fn === undefined) continue;
    if (typeof fn !== 'function') {
      return post({ kind: 'load-error', path: c.path, message: 'defines "' + name + '" as ' + typeof fn + ', not a function' });
    }
    post({ kind: 'started', path: c.path });
    let value;
    try {
      value = await fn(...args);
    } catch (err) {
      return post({ kind: 'threw', path: c.path, message: message(err) });
    }
    try {
      return post({ kind: 'returned', path: c.path, value });
    } catch (err) {
      return post({ kind: 'unclonable', path: c.path, what: typeof value });
    }
  }
  post({ kind: 'absent' });
});
`;

/** How long importing the hooks module may take before it counts as a hang. */
const LOAD_TIMEOUT_MS = 30_000;

/** `sandbox`: the project's hooks run in the agent sandbox, from `cwd` (src/lib/sandbox.ts); none for the user's own. */
export function runModuleCandidates(name: HookName, candidates: Candidate[], args: unknown[], timeoutMs: number, env: NodeJS.ProcessEnv, sandbox?: { box: RunSandbox; cwd: string }): Promise<WorkerAnswer> {
  return new Promise((resolve) => {
    // The hook sees the allowlisted environment, not the daemon's (its token, its database URL). Its output would
    // otherwise interleave with the daemon's log lines. 'advanced': arguments and answers are structured clones.
    const start = sandboxed(sandbox?.box, sandbox?.cwd ?? process.cwd(), process.execPath, ['-e', CHILD_CODE]);
    const child = spawn(start.file, start.args, { env, stdio: ['ignore', 'ignore', 'ignore', 'ipc'], serialization: 'advanced' });
    const release = trackResource('other', `hook process ${name}`, () => child.kill('SIGKILL'));
    let settled = false;
    const finish = (answer: WorkerAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      release();
      child.kill('SIGKILL');
      resolve(answer);
    };
    // Loading (a process, and tsx for a .ts file) takes a second or two on a busy machine; the
    // hook's own time limit starts when it is called, loading has a separate, looser one.
    let timer = setTimeout(() => finish({ kind: 'timeout' }), Math.max(LOAD_TIMEOUT_MS, timeoutMs));
    child.on('message', (m: WorkerAnswer | { kind: 'started' }) => {
      if (m.kind !== 'started') return finish(m);
      clearTimeout(timer);
      timer = setTimeout(() => finish({ kind: 'timeout' }), timeoutMs);
    });
    child.on('error', (err) => finish({ kind: 'crashed', message: err.message }));
    child.on('exit', (code, signal) => finish({ kind: 'crashed', message: `exited with ${signal ?? `code ${code}`} before answering` }));
    child.send({ candidates, name, args, names: [...HOOK_NAMES], tsxApi: import.meta.resolve('tsx/esm/api') });
  });
}
