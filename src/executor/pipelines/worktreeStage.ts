/**
 * The stage every worktree-based run starts with: the task version's worktree,
 * the divergence from main (past the threshold the task needs a human, with
 * the numbers), and main brought in when it merges cleanly.
 */
import { MaestroError } from '../../core/errors.js';
import { measureDivergence, syncWithBase, type Divergence } from '../../git/divergence.js';
import { ensureWorktree } from '../../git/worktree.js';
import { needsAttention, stage, type RunContext } from '../context.js';

export interface WorktreeStageOutput {
  path: string;
  branch: string;
  baseSha: string;
  divergence: Divergence;
  /** main could not be brought in cleanly: the files that conflict (the daemon schedules a conflict run). */
  conflictedFiles: string[];
}

/**
 * `sync`: bring main in (executor). `measure`: check divergence against the
 * limits (executor, conflict); a review judges the branch as it is and skips both.
 */
export function worktreeStage(ctx: RunContext, options: { sync: boolean; measure: boolean }): Promise<WorktreeStageOutput> {
  return stage(ctx, 'worktree', async () => {
    const { job, limits } = ctx;
    const base = job.project.baseBranch;
    const wt = await ensureWorktree({ repoPath: job.project.repoPath, worktreeRoot: job.project.worktreeRoot, taskId: job.taskId, version: job.task.version, baseBranch: base });
    // A branch made from the base just now has not diverged: two git processes saved on every first execute.
    const divergence = options.measure && !wt.newBranch ? await measureDivergence(wt.path, base) : { commits: 0, files: 0 };
    if (divergence.commits > limits.divergenceCommits || divergence.files > limits.divergenceFiles) {
      throw needsAttention('DIVERGENCE_TOO_HIGH', 'divergence',
        `${base} moved ${divergence.commits} commit(s) and ${divergence.files} file(s) past ${wt.branch} (limits ${limits.divergenceCommits} commits, ${limits.divergenceFiles} files)`,
        { ...divergence, limits: { commits: limits.divergenceCommits, files: limits.divergenceFiles }, branch: wt.branch });
    }
    let conflictedFiles: string[] = [];
    if (options.sync && (divergence.commits > 0 || !options.measure)) {
      const outcome = await syncWithBase(wt.path, base);
      if (outcome.kind === 'conflict') conflictedFiles = outcome.conflictedFiles;
    }
    return { path: wt.path, branch: wt.branch, baseSha: wt.baseSha, divergence, conflictedFiles };
  });
}

export function conflictNeeded(wt: WorktreeStageOutput, base: string): MaestroError {
  return new MaestroError('MERGE_CONFLICT', `${base} conflicts with ${wt.branch} in ${wt.conflictedFiles.join(', ')}; a conflict run must resolve it`, {
    details: { next: 'conflict', conflictedFiles: wt.conflictedFiles, branch: wt.branch },
  });
}
