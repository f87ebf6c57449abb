/**
 * MergeCoordinator: merges approved work (tasks in `merging`) into each
 * project's main, one project at a time, oldest approval first. Exactly once:
 * the merge ledger (`merges`) is written in the same transaction as the move
 * to done, and a branch that main already contains (a merge that happened just
 * before a crash) is recorded without merging again. A conflicting merge
 * leaves main untouched and opens a conflict run; a second failure, a dirty
 * main checkout or a cancelling hook sends the task to needs_attention.
 */
import { join } from 'node:path';
import { MaestroError, coerceError } from '../core/errors.js';
import type { Project, Task } from '../core/types.js';
import { loadProjectConfig } from '../executor/projectConfig.js';
import { git } from '../git/git.js';
import { mergeIntoMain } from '../git/merge.js';
import { removeWorktree } from '../git/worktree.js';
import { releaseMergeLease, takeMergeLease } from '../store/ops/daemons.js';
import { baseBranchOf, remoteOf, type ProjectRepos } from './repos.js';
import type { Store } from '../store/store.js';

/** Conflict runs a task may get before a person must merge it. */
export const MAX_CONFLICT_RUNS = 2;
const PUSH_RETRY_FIRST_MS = 1000;
const PUSH_RETRY_MAX_MS = 60_000;

export interface MergeHooks {
  beforeMerge?(task: Task, branch: string): Promise<{ cancel: string } | void>;
  onConflict?(task: Task, files: string[]): Promise<'auto' | 'manual'>;
}

export class MergeCoordinator {
  private running = false;
  /** Tasks whose push of main the remote refused: when to try again, and the wait after that. */
  private readonly refused = new Map<string, { at: number; waitMs: number }>();

  constructor(
    private readonly store: Store,
    private readonly opts: {
      hooks: MergeHooks;
      /** Starts a conflict run for the task; returns false when no slot is free. */
      startConflictRun: (task: Task) => Promise<boolean>;
      hasRunningRun: (taskId: string) => Promise<boolean>;
      repos: ProjectRepos;
      /** This daemon: who holds a project's merge lease while it merges there. */
      owner: string;
      leaseMs: number;
      onChange: () => void;
      onError: (err: Error) => void;
      /** Where the project's task worktrees live (removed once their task is merged). */
      worktreeRoot?: (projectId: string) => string;
    },
  ) {}

  async tick(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const merging = await this.store.tasks.list({ status: 'merging', limit: 10_000 });
      merging.sort((a, b) => a.updatedAt - b.updatedAt);
      for (const id of this.refused.keys()) if (!merging.some((t) => t.id === id)) this.refused.delete(id);
      for (const task of merging) {
        try {
          await this.mergeOne(task);
        } catch (err) {
          this.opts.onError(coerceError(err));
        }
      }
      await this.finishParents();
    } finally {
      this.running = false;
    }
  }

  private async toAttention(task: Task, reason: string): Promise<void> {
    await this.store.tasks.transition(task.id, 'needs_attention', { from: 'merging', fields: { lastRunError: reason }, reason });
    this.opts.onChange();
  }

  private async mergeOne(task: Task): Promise<void> {
    if (await this.opts.hasRunningRun(task.id)) return; // a conflict run is at work
    const retry = this.refused.get(task.id);
    if (retry && this.store.clock() < retry.at) return;
    const project = await this.store.projects.get(task.projectId);
    if (!remoteOf(project)) return this.mergeIn(task, project, project.repoPath, null);
    // Several daemons share the remote: one at a time merges into its main.
    const lease = { projectId: project.id, owner: this.opts.owner, now: this.store.clock(), leaseMs: this.opts.leaseMs };
    if (!(await takeMergeLease(this.store.db, lease))) return;
    try {
      // Sync, merge and push with nothing else touching this clone's main in between.
      await this.opts.repos.exclusive(project.id, async () => this.mergeIn(task, project, await this.opts.repos.sync(project), 'origin'));
    } finally {
      await releaseMergeLease(this.store.db, project.id, this.opts.owner);
    }
  }

  /** Merges in `repo`; with a `remote`, the branch comes from it and main goes back to it. */
  private async mergeIn(task: Task, project: Project, repo: string, remote: string | null): Promise<void> {
    const done = await this.store.db.one(`SELECT task_id FROM merges WHERE task_id = $1`, [task.id]);
    const branch = typeof task.result?.branch === 'string' ? task.result.branch : null;
    if (done) return this.markMerged(task, project, branch ?? '', null, 'already recorded');
    if (!branch) return this.toAttention(task, 'nothing to merge: the task has no branch (its execute result is missing)');
    const base = baseBranchOf(project);
    let ref = branch;
    if (remote) {
      const fetched = await git(repo, ['fetch', '-q', remote, `+refs/heads/${branch}:refs/remotes/${remote}/${branch}`], { okCodes: [128] });
      if (fetched.code === 0) ref = `${remote}/${branch}`;
      // Not on the remote, because its push after the run was refused: publish it from this clone now
      // (a refusal again is retried like a refused push of main).
      else {
        let pushed: boolean;
        try {
          pushed = await this.opts.repos.pushBranchNow(project, repo, branch);
        } catch (err) {
          return this.refusedPush(task, err);
        }
        if (!pushed) return this.toAttention(task, `branch ${branch} is not on the remote ${remoteOf(project)}`);
      }
    }
    // Merged just before a crash? Then record it; never merge twice.
    const tip = await git(repo, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], { okCodes: [1] });
    if (tip.code !== 0) return this.toAttention(task, `branch ${branch} does not exist in ${repo}`);
    const contained = await git(repo, ['merge-base', '--is-ancestor', tip.stdout.trim(), base], { okCodes: [1] });
    if (contained.code === 0) {
      await this.markMerged(task, project, branch, tip.stdout.trim(), 'already in main');
      await this.cleanUp(task, project, repo, branch);
      return;
    }

    const veto = await this.opts.hooks.beforeMerge?.(task, branch);
    if (veto && 'cancel' in veto) return this.toAttention(task, `before:merge hook cancelled: ${veto.cancel}`);
    const before = (await git(repo, ['rev-parse', '--verify', base])).stdout.trim();
    try {
      const outcome = await mergeIntoMain({ repoPath: repo, branch: ref, baseBranch: base, strategy: loadProjectConfig(repo).mergeStrategy, message: `Merge ${branch}` });
      // On a shared remote the merge counts once main is pushed; a refused push is retried next tick.
      if (remote) await this.opts.repos.pushMain(project, repo);
      this.refused.delete(task.id);
      // Hooks and checks live in `.maestro/`: work that changes them changes what runs next, so it is an event of its own.
      const settings = (await git(repo, ['diff', '--name-only', before, outcome.sha, '--', '.maestro'])).stdout.split('\n').filter(Boolean);
      await this.markMerged(task, project, branch, outcome.sha, outcome.fastForward ? 'fast-forward' : 'merge commit', outcome.previousSha, settings);
      await this.cleanUp(task, project, repo, branch);
    } catch (err) {
      if (!(err instanceof MaestroError)) throw err;
      if (err.code === 'GIT_FAILED' && remote) return this.refusedPush(task, err);
      if (err.code !== 'MERGE_CONFLICT' && err.code !== 'NOT_FAST_FORWARD') return this.toAttention(task, err.message);
      const conflicts = (await this.store.runs.list({ taskId: task.id })).filter((r) => r.kind === 'conflict').length;
      if (conflicts >= MAX_CONFLICT_RUNS) return this.toAttention(task, `still conflicts after ${conflicts} conflict runs: ${err.message}`);
      const mode = (await this.opts.hooks.onConflict?.(task, [])) ?? 'auto';
      if (mode === 'manual') return this.toAttention(task, `merge conflict; the on:conflict hook asks for a person: ${err.message}`);
      await this.store.events.append({ projectId: task.projectId, taskId: task.id, type: 'merge.conflict', payload: { branch, message: err.message } });
      await this.opts.startConflictRun(task);
      this.opts.onChange();
    }
  }

  /** The remote refused a push: say so in the task's events and try again later (1 s, 2 s, … a minute). */
  private async refusedPush(task: Task, err: unknown): Promise<void> {
    if (!(err instanceof MaestroError) || err.code !== 'GIT_FAILED') throw err;
    const waitMs = this.refused.get(task.id)?.waitMs ?? PUSH_RETRY_FIRST_MS;
    this.refused.set(task.id, { at: this.store.clock() + waitMs, waitMs: Math.min(waitMs * 2, PUSH_RETRY_MAX_MS) });
    await this.store.events.append({ projectId: task.projectId, taskId: task.id, type: 'git.push_failed', payload: { message: err.message, retryInMs: waitMs } });
    throw err;
  }

  /** `previousSha`: main before the merge, so the merged change can still be shown once its branch is gone. */
  private async markMerged(task: Task, project: Project, branch: string, sha: string | null, how: string, previousSha: string | null = null, settingsFiles: string[] = []): Promise<void> {
    await this.store.tasks.recordMerge({ taskId: task.id, projectId: project.id, branch, sha, how, previousSha, settingsFiles, title: task.title });
    this.opts.onChange();
  }

  /**
   * After the merge the task's worktree has nothing left to do: remove it, and
   * its branch too unless the project keeps branches (`keepBranches`). Main holds
   * the commits, so the change stays visible (GET /api/tasks/:id/diff). A failure
   * here is logged; the periodic prune tries the worktree again.
   */
  private async cleanUp(task: Task, project: Project, repo: string, branch: string): Promise<void> {
    try {
      const keep = project.config.keepBranches === true;
      const root = this.opts.worktreeRoot?.(project.id);
      const path = root ? join(root, `${task.id}-v${task.version}`) : null;
      if (path) await removeWorktree(repo, path, keep ? {} : { deleteBranch: branch });
      else if (!keep) await git(repo, ['branch', '-D', '--end-of-options', branch], { okCodes: [1] });
      await this.store.events.append({ projectId: project.id, taskId: task.id, type: 'git.cleanup', payload: { worktree: path, branch, branchDeleted: !keep } });
    } catch (err) {
      this.opts.onError(coerceError(err));
    }
  }

  /** A decomposed parent is done when all its children are. */
  private async finishParents(): Promise<void> {
    const waiting = await this.store.tasks.list({ status: 'waiting_children', limit: 10_000 });
    for (const parent of waiting) {
      const children = await this.store.tasks.list({ parentId: parent.id, limit: 10_000 });
      const live = children.filter((c) => c.status !== 'superseded' && c.status !== 'cancelled');
      if (live.length && live.every((c) => c.status === 'done')) {
        await this.store.tasks.transition(parent.id, 'done', { from: 'waiting_children', reason: 'all subtasks done' });
        this.opts.onChange();
      }
    }
  }
}
