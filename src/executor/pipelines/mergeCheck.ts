/**
 * Merge check pipeline (the merge queue): before an approved change lands on a base that moved since its branch
 * was cut (a merge that is no fast-forward), the base is merged into the task's branch in its worktree, the
 * project's checks run on that merged tree (sandboxed, as every check), and only that commit may land: the train
 * then fast-forwards to it (`merge`) or makes a merge commit of its tree (`no-ff`). No agent is called.
 *
 * The branch is put back on the approved commit (`job.mergeFrom`) first, so a run resumed after a crash merges
 * again from the same point; and again when a check fails, so nothing unchecked is left on the branch and
 * `task retry` checks anew. A base that now conflicts is no failure here: the branch is put back and the train
 * finds the conflict itself (a conflict run). A check of several changes together (`job.mergeBatch`) builds the
 * train's chain from the base instead: mergeChain.ts.
 */
import { MaestroError } from '../../core/errors.js';
import { git } from '../../git/git.js';
import { mergeInProgress, startMerge } from '../../git/merge.js';
import { needsAttention, stage, type RunContext } from '../context.js';
import { appendTranscript } from '../protocol/transcript.js';
import { runChecks } from './executor.js';
import { runChainCheck, type ChainCar } from './mergeChain.js';
import { commitWork, worktreeStage } from './worktreeStage.js';

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

export async function runMergeCheck(ctx: RunContext): Promise<MergeCheckResult> {
  const { job } = ctx;
  const base = job.project.baseBranch;
  const from = job.mergeFrom;
  if (!from) throw new MaestroError('JOB_INVALID', 'a merge check names the approved commit it merges onto (mergeFrom)');
  const wt = await worktreeStage(ctx, { sync: false, measure: false, fresh: true });
  if (job.mergeBatch?.length) return runChainCheck(ctx, wt, from);
  const merged = await stage(ctx, 'merge', async () => {
    if (await mergeInProgress(wt.path)) await git(wt.path, ['merge', '--abort']);
    await putBack(wt.path, from);
    const baseSha = (await git(wt.path, ['rev-parse', '--verify', `${base}^{commit}`])).stdout.trim();
    const log = await git(wt.path, ['log', '--format=%h %s', `${from}..${baseSha}`]);
    const lines = log.stdout.split('\n').filter(Boolean);
    const said = { baseSha, brought: lines.slice(0, MAX_NAMED), broughtCount: lines.length };
    const { clean } = await startMerge(wt.path, base);
    if (!clean) {
      await git(wt.path, ['merge', '--abort']);
      return { ...said, commitSha: null };
    }
    const sha = (await commitWork(ctx, wt, `Merge ${base} into ${wt.branch} (checked before landing)`)) ?? (await git(wt.path, ['rev-parse', 'HEAD'])).stdout.trim();
    return { ...said, commitSha: sha };
  });
  const result = { branch: wt.branch, from, baseSha: merged.baseSha, brought: merged.brought, broughtCount: merged.broughtCount };
  if (merged.commitSha === null) return { ...result, commitSha: null, checks: [], conflict: true };
  try {
    const outcomes = await runChecks(ctx, wt.path);
    return { ...result, commitSha: merged.commitSha, checks: outcomes.map((o) => o.name), conflict: false };
  } catch (err) {
    if (!(err instanceof MaestroError) || err.code !== 'CHECK_FAILED') throw err;
    // Nothing unchecked stays on the branch: the train would take it for a branch moved after its review.
    await putBack(wt.path, from);
    // The run has no agent: its transcript is what the check said, for `task logs` (the whole log stays in the run's checks/).
    const d = err.details ?? {};
    if (typeof d.log === 'string') appendTranscript(ctx.runDir, { at: Date.now(), stage: `check:${String(d.check)}`, role: 'notice', text: d.log });
    throw needsAttention('CHECK_FAILED', 'merge_check_failed', failedOnMerge(job.taskId, base, wt.branch, err, result), { ...err.details, from, baseSha: merged.baseSha, brought: merged.brought, broughtCount: merged.broughtCount });
  }
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
