/**
 * Conflict pipeline, the only one that runs `git merge`: main is merged into
 * the task branch for real, the agent resolves the conflicted files, Maestro
 * checks no marker is left and commits, the checks run, and the result is
 * reviewed like any change. The daemon then merges the branch into main.
 */
import { lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EDIT_TOOLS } from '../../agents/types.js';
import type { NeedsAttention } from '../protocol/outbox.js';
import { git } from '../../git/git.js';
import { mergeInProgress, startMerge } from '../../git/merge.js';
import { changedBeyond, stagedEntries } from '../../git/resolution.js';
import { visible } from '../../lib/visible.js';
import { callAgent, needsAttention, stage, type RunContext } from '../context.js';
import { reflectStage, runChecksAndGate } from './executor.js';
import { conflictPrompt } from './prompts.js';
import { reviewBranch, type ReviewResult } from './reviewer.js';
import { commitWork, worktreeStage } from './worktreeStage.js';

export interface ConflictResult {
  branch: string;
  worktreePath: string;
  commitSha: string;
  conflictedFiles: string[];
  resolvedBy: 'agent' | 'clean-merge';
  review: ReviewResult;
  next: ReviewResult['next'];
  feedback: string | null;
}

const MARKER = /^(<{7}|>{7})( |$)/m;
/** Bigger than any source file a merge resolves: not read (the agent could leave a sparse file of any size). */
const MAX_CHECKED_BYTES = 32 * 1024 * 1024;

/**
 * What is wrong with a conflicted path as the agent left it, or null: markers left in it, or something the worker
 * (outside the sandbox) must not open, the agent having chosen what is there: a FIFO would hang it, a link to
 * /dev/zero fill its memory. A link is git's to record as a link, and a file deleted is a resolution.
 */
function unresolvedIn(path: string): string | null {
  const st = lstatSync(path, { throwIfNoEntry: false });
  if (!st || st.isSymbolicLink()) return null;
  if (!st.isFile()) return 'not a file';
  if (st.size > MAX_CHECKED_BYTES) return `${st.size} bytes, too big to check for conflict markers`;
  return MARKER.test(readFileSync(path, 'utf8')) ? 'conflict markers' : null;
}

/** What the person reads when the resolution changed more than the conflicted files, and what to do. */
function overreach(taskId: string, worktree: string, beyond: string[], conflicted: string[]): string {
  const names = (paths: string[]) => paths.slice(0, 10).map((p) => visible(p)).join(', ') + (paths.length > 10 ? `, and ${paths.length - 10} more` : '');
  return `the conflict run changed files that were not in conflict: ${names(beyond)} (it may change only ${names(conflicted)}). Nothing was committed, so nothing of it can reach main; the worktree ${visible(worktree)} holds what it left. Look, then \`maestro task retry ${taskId}\` merges again (a new conflict run if main still conflicts), or cancel the task`;
}

export async function runConflict(ctx: RunContext): Promise<{ result: ConflictResult; attention?: NeedsAttention }> {
  const { job } = ctx;
  const base = job.project.baseBranch;
  const wt = await worktreeStage(ctx, { sync: false, measure: true, fresh: true });
  const merged = await stage(ctx, 'merge', async () => {
    // A restarted worker may find its own unfinished merge; abort it and start over.
    if (await mergeInProgress(wt.path)) {
      await git(wt.path, ['merge', '--abort']);
    }
    const { clean, conflictedFiles } = await startMerge(wt.path, base);
    if (clean) {
      const sha = await commitWork(ctx, wt, `Merge ${base} into ${wt.branch}`);
      return { conflictedFiles: [], commitSha: sha, resolvedBy: 'clean-merge' as const };
    }
    // What git merged by itself, before the agent: the resolution may change the conflicted files only (git/resolution.ts).
    const merged = await stagedEntries(wt.path);
    const reflection = await reflectStage(ctx, wt.path);
    const prompt = conflictPrompt(job, base, conflictedFiles) + (reflection ? `\n\n## From the last failed tries\n${reflection}` : '');
    await callAgent(ctx, { stage: 'merge', role: 'conflict', prompt, cwd: wt.path, tier: 'hard', allowedTools: job.allowedTools ?? EDIT_TOOLS, permissionMode: 'acceptEdits' });
    const left = conflictedFiles.flatMap((f) => {
      const why = unresolvedIn(join(wt.path, f));
      return why ? [{ f, why }] : [];
    });
    if (left.length) {
      const unresolved = left.map((l) => l.f);
      const said = left.every((l) => l.why === 'conflict markers') ? `conflict markers remain in ${unresolved.join(', ')}` : `unresolved: ${left.map((l) => `${l.f} (${l.why})`).join(', ')}`;
      throw needsAttention('MERGE_CONFLICT', 'conflict_unresolved', said, { unresolved, conflictedFiles });
    }
    const beforeCommit = async () => {
      const beyond = await changedBeyond(wt.path, merged, conflictedFiles);
      if (beyond.length) throw needsAttention('MERGE_CONFLICT', 'conflict_overreach', overreach(job.taskId, wt.path, beyond, conflictedFiles), { beyond, conflictedFiles });
    };
    const sha = await commitWork(ctx, wt, `Merge ${base} into ${wt.branch} (conflicts resolved by the agent in ${conflictedFiles.join(', ')})`, { beforeCommit });
    return { conflictedFiles, commitSha: sha, resolvedBy: 'agent' as const };
  });
  await runChecksAndGate(ctx, wt.path, base);
  const { result: review, attention } = await reviewBranch(ctx, wt.path, wt.branch);
  return {
    result: {
      branch: wt.branch,
      worktreePath: wt.path,
      commitSha: review.commitSha,
      conflictedFiles: merged.conflictedFiles,
      resolvedBy: merged.resolvedBy,
      review,
      next: review.next,
      feedback: review.feedback,
    },
    ...(attention ? { attention } : {}),
  };
}
