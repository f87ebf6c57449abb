/**
 * What a merge check run (mergeCheck.ts; several changes together: mergeChain.ts) returns, and what both say and do
 * when a check fails: the branch put back, and the message a person reads.
 */
import type { MaestroError } from '../../core/errors.js';
import { git } from '../../git/git.js';
import type { RunContext } from '../context.js';
import { appendTranscript } from '../protocol/transcript.js';

/** One change in a checked chain (mergeChain.ts): the task, the commit merged for it, and its merge commit. */
export interface ChainCar {
  taskId: string;
  commit: string;
  sha: string;
}

export interface MergeCheckResult {
  branch: string;
  /** The commit the checks passed on (the base merged into the branch), or null when the base now conflicts. */
  commitSha: string | null;
  /** The approved commit the merge started from. */
  from: string;
  /** The base commit merged in. */
  baseSha: string;
  /** The base's commits the merge brought in (short id and subject), newest first, at most MAX_NAMED. */
  brought: string[];
  broughtCount: number;
  checks: string[];
  /** The base conflicts with the branch now: nothing was checked, the train finds the conflict. */
  conflict: boolean;
  /** Passed on several changes together (mergeChain.ts): the chain, the task first, and the riders left out of it. */
  batch?: { cars: ChainCar[]; cut: string[] };
  /** Failed on several changes together: nothing landed, and each of these tasks is checked alone next. */
  batchFailed?: { check: string; taskIds: string[] };
}

/** How many of the base's new commits a failure names (then the count). */
const MAX_NAMED = 10;

/** The base's commit now, and its commits since `from` (short id and subject, newest first, at most MAX_NAMED): what a failure names. */
export async function baseSince(worktree: string, base: string, from: string): Promise<{ baseSha: string; brought: string[]; broughtCount: number }> {
  const baseSha = (await git(worktree, ['rev-parse', '--verify', `${base}^{commit}`])).stdout.trim();
  const lines = (await git(worktree, ['log', '--format=%h %s', `${from}..${baseSha}`])).stdout.split('\n').filter(Boolean);
  return { baseSha, brought: lines.slice(0, MAX_NAMED), broughtCount: lines.length };
}

/** The branch (checked out in the worktree) back on the approved commit, the worktree clean. */
export async function putBack(worktree: string, commit: string): Promise<void> {
  await git(worktree, ['reset', '-q', '--hard', commit]);
}

/** What the person reads: which check failed, on what, what the base brought in, that nothing landed, and the ways out. */
export function failedOnMerge(taskId: string, base: string, branch: string, err: MaestroError, r: { brought: string[]; broughtCount: number }): string {
  const d = err.details ?? {};
  const how = d.timedOut === true ? 'timed out' : `failed (exit ${String(d.exitCode)})`;
  const more = r.broughtCount > r.brought.length ? `, and ${r.broughtCount - r.brought.length} more` : '';
  const brought = r.broughtCount ? `${base} brought in ${r.broughtCount} commit${r.broughtCount === 1 ? '' : 's'} since the branch was cut: ${r.brought.join('; ')}${more}` : `${base} brought in no commit`;
  return `check ${String(d.check)} ${how} on ${branch} merged with ${base}: the change passed its checks alone, not together with ${base}. ${brought}. Nothing was merged: ${base} is as it was. \`maestro task logs ${taskId}\` shows the check's output (${String(d.logPath)}). \`maestro task retry ${taskId} --fresh\` runs the task again from the current ${base}; \`maestro task retry ${taskId}\` checks the merge again; or \`maestro task cancel ${taskId}\``;
}

/** The run has no agent: its transcript is what the check did and said, for `task logs`. */
export function say(ctx: RunContext, stageName: string, text: string): void {
  appendTranscript(ctx.runDir, { at: Date.now(), stage: stageName, role: 'notice', text });
}
