/**
 * The stage every worktree-based run starts with: the task version's worktree,
 * the divergence from main (past the threshold the task needs a human, with
 * the numbers), and main brought in when it merges cleanly.
 */
import { MaestroError } from '../../core/errors.js';
import { measureDivergence, syncWithBase, type Divergence } from '../../git/divergence.js';
import { commitAll } from '../../git/merge.js';
import { git } from '../../git/git.js';
import { ensureWorktree, headOf, setAsideLeftovers, worktreeLinked } from '../../git/worktree.js';
import { setAsideEmbeddedRepositories } from '../../git/embedded.js';
import { largeUncommitted } from '../../git/largeUncommitted.js';
import { needsAttention, stage, type RunContext } from '../context.js';

export interface WorktreeStageOutput {
  path: string;
  branch: string;
  /** Null for a review's reused worktree: it judges the branch as it is and does not read the base. */
  baseSha: string | null;
  divergence: Divergence;
  /** main could not be brought in cleanly: the files that conflict (the daemon schedules a conflict run). */
  conflictedFiles: string[];
  /** What an earlier run left uncommitted in this worktree, set aside before this run began. */
  setAside?: string[];
}

/**
 * `sync`: bring main in (executor). `measure`: check divergence against the
 * limits (executor, conflict); a review judges the branch as it is and skips both.
 * `fresh`: start from the branch's commits, setting aside what an earlier run left
 * uncommitted (the runs that write: executor, conflict).
 */
export function worktreeStage(ctx: RunContext, options: { sync: boolean; measure: boolean; fresh: boolean }): Promise<WorktreeStageOutput> {
  return stage(ctx, 'worktree', async () => {
    const { job, limits } = ctx;
    const base = job.project.baseBranch;
    const wt = await ensureWorktree({ repoPath: job.project.repoPath, worktreeRoot: job.project.worktreeRoot, taskId: job.taskId, version: job.task.version, baseBranch: base, readBase: options.measure || options.sync });
    if (wt.movedAside) ctx.emit({ type: 'phase', stage: 'worktree-recreated', state: 'done', detail: { path: wt.path, branch: wt.branch, movedAside: wt.movedAside } });
    // An earlier run's agent may have made a git repository in it, whose settings git would run outside the
    // sandbox (git/embedded.ts): its .git goes before any git runs over the worktree.
    const embedded = options.fresh && !wt.created ? await setAsideEmbeddedRepositories(wt.path) : [];
    if (embedded.length) ctx.emit({ type: 'phase', stage: 'embedded-repositories', state: 'done', detail: { repositories: embedded } });
    // A worktree kept from an earlier run of this version may hold what that run wrote and never
    // committed (it was killed, or its claim was taken back): this run starts from the branch's commits.
    // Setting aside commits what is there too: a file too large is refused first, unread, as at the commit.
    if (options.fresh && !wt.created) await refuseLargeUncommitted(ctx, wt.path);
    const aside = options.fresh && !wt.created ? await setAsideLeftovers(wt.path, `maestro: left uncommitted by an earlier run of ${job.taskId}; set aside by run ${job.runId}`) : { files: [], ref: null };
    if (aside.ref) ctx.emit({ type: 'phase', stage: 'set-aside', state: 'done', detail: { files: aside.files, ref: aside.ref, restore: `git stash apply ${aside.ref}` } });
    // An earlier run's agent switched branches or detached HEAD (that run stopped, LEFT_BRANCH): back to the task's.
    const head = wt.created ? null : headOf(wt.path);
    if (head && offBranch(head, wt.branch)) {
      await git(wt.path, ['checkout', '-q', wt.branch, '--']);
      ctx.emit({ type: 'phase', stage: 'back-on-branch', state: 'done', detail: { branch: wt.branch, was: whereHead(head) } });
    }
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
    return { path: wt.path, branch: wt.branch, baseSha: wt.baseSha, divergence, conflictedFiles, ...(aside.files.length ? { setAside: aside.files } : {}) };
  });
}

export function conflictNeeded(wt: WorktreeStageOutput, base: string): MaestroError {
  return new MaestroError('MERGE_CONFLICT', `${base} conflicts with ${wt.branch} in ${wt.conflictedFiles.join(', ')}; a conflict run must resolve it`, {
    details: { next: 'conflict', conflictedFiles: wt.conflictedFiles, branch: wt.branch },
  });
}

/**
 * Commits what the agent wrote, once the worktree is known to be still there. It can be deleted while the
 * agent works (a person's `rm -rf`, a disk clean-up), and the agent's next write makes a plain folder in its
 * place: git there says "not a git repository", or worse, with the home inside another repository, commits
 * to that one. The run stops instead, saying what happened and what to do; the retry makes the worktree
 * again on the task's branch (ensureWorktree), which keeps every commit made before. A file past
 * limits.maxFileBytes stops it too, before git reads it (largeUncommitted.ts). `beforeCommit` checks what
 * the agent left once git may look at all of it (no repository the agent made is left in the worktree).
 */
export async function commitWork(ctx: RunContext, wt: { path: string; branch: string }, message: string, o: { beforeCommit?: () => Promise<void> } = {}): Promise<string | null> {
  if (!worktreeLinked(wt.path)) {
    const id = ctx.job.taskId;
    throw new MaestroError('WORKTREE_GONE',
      `the worktree ${wt.path} of task ${id} was removed while the run was working (it is no longer a git worktree), so nothing the agent wrote could be committed; run \`maestro task retry ${id}\`: it makes the worktree again on ${wt.branch}, with every commit made before`,
      { details: { worktree: wt.path, branch: wt.branch } });
  }
  const head = headOf(wt.path);
  if (head && offBranch(head, wt.branch)) throw leftBranch(ctx.job.taskId, wt, head);
  const embedded = await setAsideEmbeddedRepositories(wt.path);
  // `committed: false`: unlike the diff gate's refusals after the commit, nothing of this run is on the branch.
  if (embedded.length) throw needsAttention('DIFF_GATE', 'diff_gate', embeddedProblem(embedded), { strayGitlinks: embedded, committed: false });
  await refuseLargeUncommitted(ctx, wt.path);
  // Once no repository the agent made is left in the worktree: git may then look at everything in it.
  await o.beforeCommit?.();
  return commitAll(wt.path, message);
}

/**
 * Stops the run (DIFF_GATE) when the worktree holds files past limits.maxFileBytes that git would read to commit or
 * to set aside (largeUncommitted.ts), naming them and the worktree; nothing is committed, which the board and
 * `task show` say (api/routes/diffGateRefusal.ts reads `committed`).
 */
async function refuseLargeUncommitted(ctx: RunContext, worktree: string): Promise<void> {
  const limit = ctx.limits.maxFileBytes;
  const files = await largeUncommitted(worktree, limit);
  if (!files.length) return;
  const names = files.slice(0, 10).map((f) => `${f.path} (${f.bytes} bytes)`).join(', ');
  const message = `${files.length} file(s) larger than limits.maxFileBytes (${limit} bytes), left uncommitted in the worktree: ${names}; git would read every byte to commit one, and once merged a file stays in the repository's history for good. In the worktree (${worktree}), delete it (and add it to .gitignore if a tool makes it), or raise limits.maxFileBytes in .maestro/config.json, then retry`;
  throw needsAttention('DIFF_GATE', 'diff_gate', message, { largeFiles: files, limits: { maxFileBytes: limit }, committed: false });
}

/** What the person reads about git repositories the agent made in its worktree, and what to do. */
function embeddedProblem(paths: string[]): string {
  const names = paths.slice(0, 5).join(', ') + (paths.length > 5 ? `, and ${paths.length - 5} more` : '');
  return `${paths.length} git repositor${paths.length === 1 ? 'y' : 'ies'} made inside the worktree: ${names}. Maestro runs no git over a repository an agent made, since git would run the commands its settings name outside the sandbox; ${paths[0]}/.git was moved out of the worktree and its files were left there, uncommitted. In the worktree, commit ${paths[0]} as files (or add a submodule with \`git submodule add <url>\`), then retry`;
}

type Head = NonNullable<ReturnType<typeof headOf>>;
export const offBranch = (head: Head, branch: string) => !('branch' in head) || head.branch !== branch;
const whereHead = (head: Head) => ('branch' in head ? head.branch : `detached at ${head.detachedAt.slice(0, 12)}`);

/**
 * The agent left the task's branch: it ran `git checkout` or `git switch` to another branch, or detached HEAD.
 * Committing its work there would put an unreviewed commit on someone's branch and leave the task's branch,
 * the one that is reviewed and merged, without it. Nothing is committed; a person looks (the agent may have
 * committed on that branch itself), and the retry goes back to the task's branch, setting aside what it left.
 */
export function leftBranch(taskId: string, wt: { path: string; branch: string }, head: Head): Error {
  const where = whereHead(head);
  return needsAttention('LEFT_BRANCH', 'left_branch',
    `the agent moved the worktree ${wt.path} off the task's branch ${wt.branch} (HEAD is now ${'branch' in head ? `on ${where}` : where}), so nothing it wrote was committed${'branch' in head ? `; look at ${where} for commits the agent may have made there` : ''}. \`maestro task retry ${taskId}\` goes back to ${wt.branch}, setting aside what the agent left in the worktree (the run names the ref to restore it from)`,
    { worktree: wt.path, branch: wt.branch, head: where });
}
