/**
 * Runs a module hook in a child process of its own, so that a hook that never
 * returns — even one stuck in a synchronous loop — can be stopped (killed), a
 * hook that crashes or calls process.exit() takes only its process down, and
 * the hook sees only the allowlisted environment: a worker thread shared the
 * daemon's process, whose /proc/self/environ holds the daemon's secrets.
 *
 * The child is sent (on its stdin) the candidate files in precedence order. It imports each
 * module in turn (`.ts` through tsx's tsImport) and calls the first that
 * defines the hook; a shell candidate met first is handed back to the caller
 * to run. The child's code is a string (node -e) so it runs the same from the
 * sources, from dist/ and inside vitest, none of which share a loader.
 */
import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { deserialize, serialize } from 'node:v8';
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
  | { kind: 'too-large'; bytes: number }
  | { kind: 'timeout' }
  | { kind: 'crashed'; message: string };

/**
 * The most a hook's reply may be, as a shell hook's output is kept (shellHook.ts): a reason or a plan, not a log.
 * The daemon stores a cancel's reason as an event sent to every board. Node's IPC channel has no limit (it
 * gathers a message whole, then decodes it on the event loop: 64 MB took the daemon's memory and a second), so
 * the child answers on a pipe of its own, read here in frames (a 4-byte length, then v8's serialization, the
 * same structured clone the IPC channel made) and refused from the length, before any of it is gathered.
 */
export const MAX_HOOK_REPLY_BYTES = 1024 * 1024;

const CHILD_CODE = `
const { pathToFileURL } = require('node:url');
const v8 = require('node:v8');
const net = require('node:net');
const out = new net.Socket({ fd: 3, readable: false, writable: true });
out.on('error', () => {});
const post = (m) => {
  const body = v8.serialize(m);
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length);
  out.write(Buffer.concat([head, body]));
};
const message = (err) => (err && err.message) ? String(err.message) : String(err);
const input = [];
process.stdin.on('data', (d) => input.push(d));
process.stdin.on('end', () => run(v8.deserialize(Buffer.concat(input))));
async function run({ candidates, name, args, names, tsxApi }) {
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
}
`;

/** What the child may say; anything else on its pipe is not a reply. */
const REPLY_KINDS = new Set(['started', 'absent', 'shell', 'returned', 'threw', 'unclonable', 'load-error']);

/** How long importing the hooks module may take before it counts as a hang. */
const LOAD_TIMEOUT_MS = 30_000;

/** `sandbox`: the project's hooks run in the agent sandbox, from `cwd` (src/lib/sandbox.ts); none for the user's own. */
export function runModuleCandidates(name: HookName, candidates: Candidate[], args: unknown[], timeoutMs: number, env: NodeJS.ProcessEnv, sandbox?: { box: RunSandbox; cwd: string }): Promise<WorkerAnswer> {
  return new Promise((resolve) => {
    // The hook sees the allowlisted environment, not the daemon's (its token, its database URL). Its output would
    // otherwise interleave with the daemon's log lines. Arguments (on stdin) and answers (on fd 3) are v8 structured clones.
    const start = sandboxed(sandbox?.box, sandbox?.cwd ?? process.cwd(), process.execPath, ['-e', CHILD_CODE]);
    const child = spawn(start.file, start.args, { env, stdio: ['pipe', 'ignore', 'ignore', 'pipe'] });
    const release = trackResource('other', `hook process ${name}`, () => child.kill('SIGKILL'));
    const replies = child.stdio[3] as Readable;
    let settled = false;
    const finish = (answer: WorkerAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      release();
      replies.destroy();
      child.kill('SIGKILL');
      resolve(answer);
    };
    // Loading (a process, and tsx for a .ts file) takes a second or two on a busy machine; the
    // hook's own time limit starts when it is called, loading has a separate, looser one.
    let timer = setTimeout(() => finish({ kind: 'timeout' }), Math.max(LOAD_TIMEOUT_MS, timeoutMs));
    let started = false;
    const onMessage = (m: WorkerAnswer | { kind: 'started' }) => {
      if (m.kind !== 'started') return finish(m);
      if (started) return; // once: a hook saying it again does not get more time
      started = true;
      clearTimeout(timer);
      timer = setTimeout(() => finish({ kind: 'timeout' }), timeoutMs);
    };
    let pending = Buffer.alloc(0);
    let total = 0;
    replies.on('data', (d: Buffer) => {
      total += d.length;
      // Two frames at most are a reply ('started', then the answer); more than the cap in all is not one.
      if (total > MAX_HOOK_REPLY_BYTES + 1024) return finish({ kind: 'too-large', bytes: total });
      pending = Buffer.concat([pending, d]);
      while (!settled && pending.length >= 4) {
        const bytes = pending.readUInt32BE(0);
        if (bytes > MAX_HOOK_REPLY_BYTES) return finish({ kind: 'too-large', bytes });
        if (pending.length < 4 + bytes) return;
        const body = pending.subarray(4, 4 + bytes);
        pending = pending.subarray(4 + bytes);
        let m: unknown;
        try {
          m = deserialize(body);
        } catch (err) {
          return finish({ kind: 'crashed', message: `answered with something that is not a reply (${(err as Error).message})` });
        }
        const kind = (m as { kind?: unknown } | null)?.kind;
        if (typeof kind !== 'string' || !REPLY_KINDS.has(kind)) return finish({ kind: 'crashed', message: 'answered with something that is not a reply' });
        onMessage(m as WorkerAnswer);
      }
    });
    replies.on('error', () => {});
    child.on('error', (err) => finish({ kind: 'crashed', message: err.message }));
    // 'close', not 'exit': it comes once the pipe is read to its end, so a reply sent just before an exit counts.
    child.on('close', (code, signal) => finish({ kind: 'crashed', message: `exited with ${signal ?? `code ${code}`} before answering` }));
    child.stdin!.on('error', () => {});
    child.stdin!.end(serialize({ candidates, name, args, names: [...HOOK_NAMES], tsxApi: import.meta.resolve('tsx/esm/api') }));
  });
}
