/**
 * HookRunner: finds the hook for a name and runs it within a time limit.
 *
 * Where hooks live, first match wins, per hook name (a project hook wins over
 * a global one; a project that defines only before:execute still gets the
 * global before:merge):
 *   1. <repo>/.maestro/hooks.ts | hooks.mjs | hooks.js  (the first that exists)
 *   2. <repo>/.maestro/hooks/<name with ':' → '-'>.sh
 *   3. $MAESTRO_HOME/hooks.ts | hooks.mjs | hooks.js
 *   4. $MAESTRO_HOME/hooks/<name>.sh
 *
 * Failing closed: a hook that times out (5 s by default), throws, crashes,
 * cannot be loaded or answers outside the contract counts as a cancel, with a
 * reason that names the hook and its file. The daemon records every cancel as
 * an event with that reason.
 *
 * A project's hooks are the repository's code, so they run in the agent sandbox
 * when the daemon has one (as its checks do); the global ones are the user's own
 * and run as the user. A project module without the hook hands over to the
 * global hooks in a process of their own.
 */
import { processAgentEnv } from '../lib/agentEnv.js';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { HOOK_NAMES, moduleArgs, readModuleAnswer, readShellAnswer, shellFileName, type HookContexts, type HookName, type HookOutcome } from './contract.js';
import { MAX_HOOK_REPLY_BYTES, runModuleCandidates, type Candidate, type WorkerAnswer } from './moduleHook.js';
import { runShellHook, type ShellAnswer } from './shellHook.js';
import type { RunSandbox, SandboxSpec } from '../lib/sandbox.js';

export const DEFAULT_HOOK_TIMEOUT_MS = 5_000;
const MODULE_FILES = ['hooks.ts', 'hooks.mjs', 'hooks.js'];

export interface HookRunnerOptions {
  /** The project's repository; its `.maestro/` holds project hooks. Null: global hooks only. */
  projectRoot: string | null;
  /** $MAESTRO_HOME; holds global hooks. Null: project hooks only. */
  globalHome: string | null;
  /** A hook still running after this long counts as a cancel. */
  timeoutMs?: number;
  /** The hooks' environment: an allowlist by default (src/lib/agentEnv.ts), never the daemon's secrets. */
  env?: NodeJS.ProcessEnv;
  /** The sandbox the project's hooks run in (src/daemon/jobs.ts sandboxSpecFor); none: as the user. */
  sandbox?: SandboxSpec | null;
}

/** Candidates of one origin, and the sandbox they run in. */
interface Origin {
  candidates: Candidate[];
  sandbox?: { box: RunSandbox; cwd: string };
}

/** The hook files a repository holds in `.maestro/` (relative to the repository), in the order HookRunner tries them. */
export function repositoryHooks(projectRoot: string): string[] {
  const dir = join(resolve(projectRoot), '.maestro');
  const module = MODULE_FILES.map((f) => join('.maestro', f)).find((p) => existsSync(join(projectRoot, p)));
  const scripts = HOOK_NAMES.map((n) => join('.maestro', 'hooks', shellFileName(n))).filter((p) => existsSync(join(dir, '..', p)));
  return [...(module ? [module] : []), ...scripts];
}

export class HookRunner {
  static readonly NAMES = HOOK_NAMES;
  private readonly dirs: Array<{ dir: string; sandbox?: Origin['sandbox'] }>;
  readonly timeoutMs: number;
  private readonly env: NodeJS.ProcessEnv;

  constructor(options: HookRunnerOptions) {
    this.env = options.env ?? processAgentEnv();
    this.dirs = [];
    if (options.projectRoot) {
      const root = resolve(options.projectRoot);
      this.dirs.push({ dir: join(root, '.maestro'), ...(options.sandbox ? { sandbox: { box: { spec: options.sandbox, worktree: null }, cwd: root } } : {}) });
    }
    if (options.globalHome) this.dirs.push({ dir: resolve(options.globalHome) });
    this.timeoutMs = options.timeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS;
  }

  /** The files that may answer `name`, in precedence order (only those that exist). */
  candidates(name: HookName): Candidate[] {
    return this.origins(name).flatMap((o) => o.candidates);
  }

  /** The project's candidates, then the global ones, each with the sandbox it runs in. */
  private origins(name: HookName): Origin[] {
    const out: Origin[] = [];
    for (const { dir, sandbox } of this.dirs) {
      const candidates: Candidate[] = [];
      const module = MODULE_FILES.map((f) => join(dir, f)).find((p) => existsSync(p));
      if (module) candidates.push({ kind: 'module', path: module });
      const script = join(dir, 'hooks', shellFileName(name));
      if (existsSync(script)) candidates.push({ kind: 'shell', path: script });
      if (candidates.length) out.push({ candidates, ...(sandbox ? { sandbox } : {}) });
    }
    return out;
  }

  /**
   * Runs the hook `name` with its context. Never throws for a hook's failure:
   * that is a cancel with a reason. A cancelled on:conflict carries value 'manual'.
   */
  async run<N extends HookName>(name: N, context: HookContexts[N]): Promise<HookOutcome> {
    const result = await this.runOnce(name, context);
    if (name === 'on:conflict' && result.outcome === 'cancel') return { ...result, value: 'manual' };
    return result;
  }

  private async runOnce<N extends HookName>(name: N, context: HookContexts[N]): Promise<HookOutcome> {
    if (!(HOOK_NAMES as readonly string[]).includes(name)) {
      throw new Error(`unknown hook "${String(name)}"; hooks are ${HOOK_NAMES.join(', ')}`);
    }
    const ctx = context as unknown as Record<string, unknown>;
    const deadline = Date.now() + this.timeoutMs;
    let script: { path: string; sandbox?: Origin['sandbox'] } | null = null;
    for (const origin of this.origins(name)) {
      const first = origin.candidates[0]!;
      if (first.kind === 'shell') {
        script = { path: first.path, ...(origin.sandbox ? { sandbox: origin.sandbox } : {}) };
        break;
      }
      const left = Math.max(1, deadline - Date.now());
      const answer = await runModuleCandidates(name, origin.candidates, moduleArgs(name, context), left, { ...this.env, MAESTRO_HOOK: name }, origin.sandbox);
      if (answer.kind === 'absent') continue;
      if (answer.kind === 'shell') {
        script = { path: answer.path, ...(origin.sandbox ? { sandbox: origin.sandbox } : {}) };
        break;
      }
      return this.moduleOutcome(name, ctx, answer, first.path);
    }
    if (!script) return noHook(name, ctx);
    return this.shellOutcome(name, ctx, script.path, await runShellHook(script.path, { hook: name, ...ctx }, Math.max(1, deadline - Date.now()), { ...this.env, MAESTRO_HOOK: name }, script.sandbox?.box));
  }

  /** What a module hook's answer means (`module`: the module file, for a hook that never answered). */
  private moduleOutcome(name: HookName, ctx: Record<string, unknown>, answer: Exclude<WorkerAnswer, { kind: 'absent' | 'shell' }>, module: string): HookOutcome {
    const where = (path: string) => `hook "${name}" in ${path}`;
    switch (answer.kind) {
      case 'returned':
        return readModuleAnswer(name, answer.path, answer.value, ctx);
      case 'threw':
        return failed(name, answer.path, `${where(answer.path)} threw: ${answer.message}`);
      case 'unclonable':
        return failed(name, answer.path, `${where(answer.path)} returned a ${answer.what} that cannot be passed on; expected plain data`);
      case 'load-error':
        return failed(name, answer.path, `hooks module ${answer.path} ${answer.message}`);
      case 'too-large':
        return failed(name, module, `${where(module)} answered with more than ${MAX_HOOK_REPLY_BYTES} bytes; nothing of it was read (a hook's reply is a reason or a plan, up to ${MAX_HOOK_REPLY_BYTES} bytes as a shell hook's output)`);
      case 'timeout':
        return failed(name, module, `hook "${name}" did not answer within ${this.timeoutMs} ms (a hook past its time counts as a cancel)`);
      case 'crashed':
        return failed(name, module, `hook "${name}" crashed: ${answer.message}`);
      default: {
        const never: never = answer;
        throw new Error(`unexpected worker answer ${JSON.stringify(never)}`);
      }
    }
  }

  /** What a shell hook's exit means: 0 and an answer continue, anything else cancels. */
  private shellOutcome(name: HookName, ctx: Record<string, unknown>, script: string, answer: ShellAnswer): HookOutcome {
    switch (answer.kind) {
      case 'timeout':
        return failed(name, script, `hook "${name}" in ${script} did not finish within ${this.timeoutMs} ms and was killed (a hook past its time counts as a cancel)`);
      case 'crashed':
        return failed(name, script, `hook "${name}" in ${script} could not run: ${answer.message}`);
      case 'exited':
        if (answer.code !== 0) {
          const said = answer.stdout.trim() || answer.stderr.trim();
          return { outcome: 'cancel', source: script, reason: said || `hook "${name}" in ${script} exited with code ${answer.code}` };
        }
        return readShellAnswer(name, script, answer.stdout, ctx);
      default: {
        const never: never = answer;
        throw new Error(`unexpected shell answer ${JSON.stringify(never)}`);
      }
    }
  }
}

function failed(_name: HookName, source: string, reason: string): HookOutcome {
  return { outcome: 'cancel', failed: true, source, reason };
}

/** No hook defined: continue, with the value the contract gives by default. */
function noHook(name: HookName, ctx: Record<string, unknown>): HookOutcome {
  if (name === 'after:planner:output') return { outcome: 'continue', value: String(ctx.plan ?? '') };
  if (name === 'on:conflict') return { outcome: 'continue', value: 'auto' };
  return { outcome: 'continue' };
}
