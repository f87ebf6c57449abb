/**
 * The hook contract (ARCHITECTURE §3 Hooks, seed 002 §6.1). A hook is a
 * function in a TS/JS module or a shell script; the daemon runs it at six
 * points and obeys its answer:
 *
 *   before:task:claim     (task)           → nothing | { cancel: reason }
 *   after:planner:output  (task, plan)     → the plan to keep (string) | nothing (keep it) | { cancel }
 *   before:execute        (task, job)      → nothing | { cancel: reason }
 *   before:merge          (task, branch)   → nothing | { cancel: reason }
 *   on:conflict           (task, files)    → 'auto' | 'manual' | nothing ('auto')
 *   before:exec-review    (task, result)   → nothing | { cancel: reason }
 *
 * Module hooks get those positional arguments; shell hooks get the whole
 * context as JSON on stdin. This file only knows names, contexts and how to
 * read an answer; loading and running live in runner.ts.
 */

export const HOOK_NAMES = ['before:task:claim', 'after:planner:output', 'before:execute', 'before:merge', 'on:conflict', 'before:exec-review'] as const;
export type HookName = (typeof HOOK_NAMES)[number];

export type ConflictMode = 'auto' | 'manual';

/** What each hook is given. `task` is the Task as the API shows it; the rest is plain JSON. */
export interface HookContexts {
  'before:task:claim': { task: unknown };
  'after:planner:output': { task: unknown; plan: string };
  'before:execute': { task: unknown; job: unknown };
  'before:merge': { task: unknown; branch: string };
  'on:conflict': { task: unknown; files: string[] };
  'before:exec-review': { task: unknown; result: unknown };
}

export interface HookOutcome {
  outcome: 'continue' | 'cancel';
  /** Why a hook cancelled: its own words, or what went wrong with it (timeout, crash, bad answer). */
  reason?: string;
  /** after:planner:output: the plan to keep. on:conflict: 'auto' | 'manual'. */
  value?: string;
  /** The file that answered (a module or a script); absent when no hook is defined. */
  source?: string;
  /** True when the cancel comes from the hook failing rather than choosing to cancel. */
  failed?: boolean;
}

export function isHookName(name: string): name is HookName {
  return (HOOK_NAMES as readonly string[]).includes(name);
}

/** `before:execute` → `before-execute.sh`: the file name of a shell hook. */
export function shellFileName(name: HookName): string {
  return `${name.replaceAll(':', '-')}.sh`;
}

/** The positional arguments a module hook is called with (seed 002 §6.1). */
export function moduleArgs<N extends HookName>(name: N, context: HookContexts[N]): unknown[] {
  const c = context as Record<string, unknown>;
  switch (name) {
    case 'before:task:claim':
      return [c.task];
    case 'after:planner:output':
      return [c.task, c.plan];
    case 'before:execute':
      return [c.task, c.job];
    case 'before:merge':
      return [c.task, c.branch];
    case 'on:conflict':
      return [c.task, c.files];
    case 'before:exec-review':
      return [c.task, c.result];
    default: {
      const never: never = name;
      throw new Error(`unknown hook ${String(never)}`);
    }
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value)}`;
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return `an object with keys ${JSON.stringify(Object.keys(value as object))}`;
  return `${typeof value} ${String(value)}`;
}

function cancelOf(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const keys = Object.keys(value);
  const cancel = (value as { cancel?: unknown }).cancel;
  if (keys.length === 1 && typeof cancel === 'string' && cancel.trim()) return cancel.trim();
  return null;
}

/**
 * Reads what a module hook returned. A value outside the contract is an error
 * that names the hook, the file, what came back and what was expected.
 */
export function readModuleAnswer(name: HookName, source: string, value: unknown, context: Record<string, unknown>): HookOutcome {
  const bad = (expected: string): HookOutcome => ({
    outcome: 'cancel',
    failed: true,
    source,
    reason: `hook "${name}" in ${source} returned ${describe(value)}; expected ${expected}`,
  });
  const cancel = cancelOf(value);
  if (cancel !== null) return { outcome: 'cancel', reason: cancel, source };
  switch (name) {
    case 'after:planner:output':
      if (value === undefined) return { outcome: 'continue', value: String(context.plan ?? ''), source };
      if (typeof value === 'string') return { outcome: 'continue', value, source };
      return bad('the plan as a string, nothing (keep the plan) or { cancel: "<reason>" }');
    case 'on:conflict':
      if (value === undefined) return { outcome: 'continue', value: 'auto', source };
      if (value === 'auto' || value === 'manual') return { outcome: 'continue', value, source };
      return bad('"auto" or "manual"');
    case 'before:task:claim':
    case 'before:execute':
    case 'before:merge':
    case 'before:exec-review':
      if (value === undefined || value === null) return { outcome: 'continue', source };
      return bad('nothing or { cancel: "<non-empty reason>" }');
    default: {
      const never: never = name;
      throw new Error(`unknown hook ${String(never)}`);
    }
  }
}

/** Reads a shell hook that exited 0: stdout is the new plan (after:planner:output) or the mode (on:conflict). */
export function readShellAnswer(name: HookName, source: string, stdout: string, context: Record<string, unknown>): HookOutcome {
  const out = stdout.trim();
  if (name === 'after:planner:output') return { outcome: 'continue', value: out ? stdout : String(context.plan ?? ''), source };
  if (name === 'on:conflict') {
    if (!out) return { outcome: 'continue', value: 'auto', source };
    if (out === 'auto' || out === 'manual') return { outcome: 'continue', value: out, source };
    return { outcome: 'cancel', failed: true, source, reason: `hook "${name}" in ${source} printed ${describe(out)}; expected "auto" or "manual" (or nothing for auto)` };
  }
  return { outcome: 'continue', source };
}

/** The event type and payload the daemon records when a hook cancels (one shape for every hook). */
export const HOOK_CANCELLED_EVENT = 'hook.cancelled';

export function hookCancelPayload(name: HookName, outcome: HookOutcome): Record<string, unknown> {
  return { hook: name, reason: outcome.reason ?? null, source: outcome.source ?? null, failed: outcome.failed ?? false };
}
