/**
 * A merge check of several changes together (daemon/mergeBatch.ts): on the task's branch in its worktree, the chain the
 * train would build — from the base, the task's commit (`job.mergeFrom`) then each rider's (`job.mergeBatch`, in queue
 * order) merged in turn, a merge commit each with the chain so far as its first parent and the train's message — and
 * the project's checks run once on the chain's tip. Passed, that tip is what lands: main fast-forwards to it, and each
 * task is recorded with its own merge commit in it.
 *
 * The branch is reset to the base first, so a run resumed after a crash builds the same chain again from the base
 * (as a check of one change puts its branch back on `mergeFrom`). A rider that conflicts with the chain before it (or
 * that this repository lacks) cuts the chain there: the riders from it on are not checked, and the train finds the
 * conflict itself. Failed with more than one change in the chain, nobody is sent to needs_attention: the branch is put
 * back on `mergeFrom`, and the daemon checks each of them alone (so the one that breaks the checks is found by its own
 * check). A chain of the task alone that fails: needs_attention, as a check of one change.
 */
import { MaestroError } from '../../core/errors.js';
import { git } from '../../git/git.js';
import { mergeCommitOnto, mergeInProgress } from '../../git/merge.js';
import { needsAttention, stage, type RunContext } from '../context.js';
import { runChecks } from './executor.js';
import { baseSince, failedOnMerge, putBack, say, type ChainCar, type MergeCheckResult } from './mergeCheckResult.js';
import type { WorktreeStageOutput } from './worktreeStage.js';

interface Chain {
  baseSha: string;
  cars: ChainCar[];
  /** The riders left out of the chain (a conflict, a commit this repository lacks), in queue order. */
  cut: string[];
  brought: string[];
  broughtCount: number;
}

export async function runChainCheck(ctx: RunContext, wt: WorktreeStageOutput, from: string): Promise<MergeCheckResult> {
  const { job } = ctx;
  const base = job.project.baseBranch;
  const riders = job.mergeBatch ?? [];
  const chain = await stage(ctx, 'merge', async (): Promise<Chain> => {
    if (await mergeInProgress(wt.path)) await git(wt.path, ['merge', '--abort']);
    const { baseSha, brought, broughtCount } = await baseSince(wt.path, base, from);
    await putBack(wt.path, baseSha);
    const cars: ChainCar[] = [];
    const cut: string[] = [];
    for (const car of [{ taskId: job.taskId, branch: wt.branch, commit: from }, ...riders]) {
      const sha = cut.length ? null : await mergeCommitOnto(wt.path, car.commit, `Merge ${car.branch}`);
      if (sha) cars.push({ taskId: car.taskId, commit: car.commit, sha });
      else cut.push(car.taskId);
    }
    // The task's own change conflicts with the base: nothing is checked, and the train finds the conflict.
    if (!cars.length) await putBack(wt.path, from);
    return { baseSha, cars, cut: cut.filter((id) => id !== job.taskId), brought, broughtCount };
  });
  const result = { branch: wt.branch, from, baseSha: chain.baseSha, brought: chain.brought, broughtCount: chain.broughtCount };
  if (!chain.cars.length) return { ...result, commitSha: null, checks: [], conflict: true };
  const titles = new Map(riders.map((r) => [r.taskId, `${r.title} (${r.branch})`]));
  const named = chain.cars.map((c) => titles.get(c.taskId) ?? `${job.task.title} (${wt.branch})`);
  const cutSaid = chain.cut.length ? `; left out, as they conflict with the chain or are missing: ${chain.cut.map((id) => titles.get(id) ?? id).join(', ')}` : '';
  say(ctx, 'merge', `Checking ${chain.cars.length} changes together on ${base}, merged in this order: ${named.join(', ')}${cutSaid}`);
  const tip = chain.cars[chain.cars.length - 1]!.sha;
  try {
    const outcomes = await runChecks(ctx, wt.path);
    return { ...result, commitSha: tip, checks: outcomes.map((o) => o.name), conflict: false, batch: { cars: chain.cars, cut: chain.cut } };
  } catch (err) {
    if (!(err instanceof MaestroError) || err.code !== 'CHECK_FAILED') throw err;
    // Nothing unchecked stays on the branch: the train would take it for a branch moved after its review.
    await putBack(wt.path, from);
    const d = err.details ?? {};
    if (typeof d.log === 'string') say(ctx, `check:${String(d.check)}`, d.log);
    if (chain.cars.length === 1) {
      throw needsAttention('CHECK_FAILED', 'merge_check_failed', failedOnMerge(job.taskId, base, wt.branch, err, result), { ...err.details, from, baseSha: chain.baseSha, brought: chain.brought, broughtCount: chain.broughtCount });
    }
    say(ctx, `check:${String(d.check)}`, `Check ${String(d.check)} failed on the ${chain.cars.length} changes together: nothing landed, and each of them is checked alone next, so the one that breaks it is found by its own check`);
    return { ...result, commitSha: null, checks: [], conflict: false, batchFailed: { check: String(d.check), taskIds: chain.cars.map((c) => c.taskId) } };
  }
}
