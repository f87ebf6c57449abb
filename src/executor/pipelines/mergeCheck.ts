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
import { runChecks } from './executor.js';
import { runChainCheck } from './mergeChain.js';
import { baseSince, failedOnMerge, putBack, say, type MergeCheckResult } from './mergeCheckResult.js';
import { commitWork, worktreeStage } from './worktreeStage.js';

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
    const said = await baseSince(wt.path, base, from);
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
    if (typeof d.log === 'string') say(ctx, `check:${String(d.check)}`, d.log);
    throw needsAttention('CHECK_FAILED', 'merge_check_failed', failedOnMerge(job.taskId, base, wt.branch, err, result), { ...err.details, from, baseSha: merged.baseSha, brought: merged.brought, broughtCount: merged.broughtCount });
  }
}
