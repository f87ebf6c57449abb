/**
 * Where a scripted agent's files may be, when an API client names them (POST and PATCH /api/projects;
 * docs/scripted-agent.md, "Where its files may be"). The worker reads the script and appends to the call log
 * outside the agent sandbox, so an API parameter must not reach past what the project's own agent may reach:
 *   - `script`: an absolute path in the project's repository, links followed. A sandboxed agent reads that
 *     folder anyway; anywhere else the daemon would read a file of the caller's choosing (the token) and say its
 *     structure back in the refusal.
 *   - `callLog`: not settable through the API. The worker appends to it outside the sandbox, and the repository
 *     is read-only to agents: a log there could append a line with a task's title to one of its scripts or hooks.
 *     It is for Maestro's own callers (the demo, the tests, the benches), which store their settings directly.
 * A path the project already has is kept as it is: those same callers set theirs outside the repository, and the
 * board and `maestro project config set` send the whole settings back with every change.
 */
import { isAbsolute } from 'node:path';
import { MaestroError } from '../core/errors.js';
import { holds, landing } from '../lib/paths.js';

/** Whether `path` is absolute and lands in the repository `repoPath` (links resolved; a dangling link lands nowhere known). */
export function inRepository(repoPath: string, path: string): boolean {
  if (!isAbsolute(path)) return false;
  const landed = landing(path);
  return 'real' in landed && holds(repoPath, landed.real);
}

type ScriptedPaths = { script?: unknown; callLog?: unknown };

function scriptedOf(config: Record<string, unknown>): ScriptedPaths | null {
  const provider = config.provider as { kind?: unknown } | undefined;
  return provider && typeof provider === 'object' && provider.kind === 'scripted' ? (provider as ScriptedPaths) : null;
}

/**
 * Refuses a scripted provider's new or changed script outside the project's repository, and a new or changed call
 * log (BAD_INPUT naming the field); `before` is what the project has stored ({} for a new one).
 */
export function checkScriptedPaths(after: Record<string, unknown>, before: Record<string, unknown>, repoPath: string, where = 'config'): void {
  const next = scriptedOf(after);
  if (!next) return;
  const prior = scriptedOf(before) ?? {};
  const problems: string[] = [];
  if (typeof next.script === 'string' && next.script !== prior.script && !inRepository(repoPath, next.script)) {
    problems.push(`${where}.provider.script: ${next.script} is not in the project's repository ${repoPath}; give the absolute path of a script file in it (links are followed)`);
  }
  if (next.callLog !== undefined && next.callLog !== prior.callLog) {
    problems.push(`${where}.provider.callLog: the call log is written outside the agent sandbox, so it is not set through the API; leave it out (each run then counts its own calls: docs/scripted-agent.md)`);
  }
  if (problems.length) {
    throw new MaestroError('BAD_INPUT', `Invalid project settings: ${problems.join('; ')}. Nothing was saved.`, { details: { problems } });
  }
}
