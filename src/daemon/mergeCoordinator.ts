/**
 * MergeCoordinator: merges approved work (tasks in `merging`) into each
 * project's main, oldest approval first, in trains (mergeTrain.ts): every
 * approved task of a project that can go is merged in one pass, and on a
 * shared remote main is pushed once for all of them, under the project's merge
 * lease. Exactly once: a merge is recorded (the ledger `merges` and the move to
 * done, in one transaction) only after the push succeeded, and a branch that
 * main already contains (a push just before a crash, or another daemon's
 * train) is recorded without merging again. Before pushing, the lease is taken
 * again: a daemon whose lease lapsed during a long train pushes nothing (and the
 * push is never forced, so a concurrent one is refused anyway). A conflicting
 * car leaves main as it was and opens a conflict run (conflictRuns.ts) once
 * the train is pushed and the lease released (the run needs the clone, and
 * main with the cars before it); a second failure, a dirty main checkout (or untracked files there
 * the branch would overwrite: git refuses, and that is no conflict) or a cancelling hook sends
 * the task to needs_attention; so does a locked one, unless the lock is momentary (mergeLock.ts), a car
 * that would write over git-ignored files in a person's checkout (git would, without a word:
 * git/ignoredInTheWay.ts), and every approved task of a project whose folder is gone (projectFolder.ts).
 * A task whose push the remote refused is retried later in a train of its own, so one refused
 * change cannot hold the others. A car that is no fast-forward in a project with checks waits for a merge check
 * run first (mergeQueue.ts), opened like a conflict run once the lease is released.
 */
import { MaestroError, coerceError, isMaestroError } from '../core/errors.js';
import type { Project, RunKind, Task } from '../core/types.js';
import { loadProjectConfig, type ProjectConfig } from '../executor/projectConfig.js';
import { assertMainCheckout, refsMergedInto } from '../git/merge.js';
import { DAEMON_STALE_LEASES, conflictHeldElsewhere, mergeLeaseHeldElsewhere, releaseMergeLease, takeMergeLease } from '../store/ops/daemons.js';
import type { TransitionFields } from '../store/ops/transitionTask.js';
import { ConflictRuns, type MergeRunKind } from './conflictRuns.js';
import { checkEvent, inQueueOrder, mustCheckFor } from './mergeQueue.js';
import { carsFor, type CarDeps } from './mergeCars.js';
import { cleanUpLanded, type CleanupDeps, type Landed } from './mergeCleanup.js';
import { LockWaits } from './mergeLock.js';
import { fetchedAsReviewed, landedAs, runTrain, thenRetry, type Car } from './mergeTrain.js';
import { finishParents } from './parentTasks.js';
import { checkoutGone } from './projectFolder.js';
import { baseBranchOf, remoteOf, type ProjectRepos } from './repos.js';
import type { Store } from '../store/store.js';

type MergeStrategy = ProjectConfig['mergeStrategy'];

/** Cars per train: bounds how long one daemon holds the lease (a slow machine, hundreds approved at once). */
export const MAX_TRAIN = 25;
/** Rounds of trains in one tick while work keeps landing (each round releases the lease and the clone in between). */
const MAX_ROUNDS = 5;
const PUSH_RETRY_FIRST_MS = 1000;
const PUSH_RETRY_MAX_MS = 60_000;

export interface MergeHooks {
  beforeMerge?(task: Task, branch: string): Promise<{ cancel: string } | void>;
  onConflict?(task: Task, files: string[]): Promise<'auto' | 'manual'>;
}

export class MergeCoordinator {
  /** The projects merging now (mergeProjectRounds never rejects). */
  private readonly inFlight = new Map<string, Promise<void>>();
  /** Projects a tick found with work due while they were merging: merged again as soon as that ends. */
  private readonly dueAgain = new Set<string>();
  /** Parents being finished (finishParents). */
  private parents: Promise<void> = Promise.resolve();
  /** Tasks whose push of main the remote refused: when to try again, and the wait after that. */
  private readonly refused = new Map<string, { at: number; waitMs: number }>();
  /** Tasks whose merge found the main checkout locked (mergeLock.ts). */
  private readonly locks: LockWaits;
  /** Conflict runs being opened, and those waiting for a free slot. */
  private readonly conflictRuns: ConflictRuns;
  private readonly cleanupDeps: CleanupDeps;
  private readonly carDeps: CarDeps;

  constructor(
    private readonly store: Store,
    private readonly opts: {
      hooks: MergeHooks;
      /** Starts a conflict run (or a merge check: mergeQueue.ts) for the task; returns false when no slot is free. */
      startConflictRun: (task: Task, kind: MergeRunKind) => Promise<boolean>;
      /** The kind of the task's running run, or null when none runs. */
      runningRun: (taskId: string) => Promise<RunKind | null>;
      repos: ProjectRepos;
      /** This daemon: who holds a project's merge lease while it merges there. */
      owner: string;
      leaseMs: number;
      onChange: () => void;
      /** Asks for another tick of the project: work was approved in it while it was merging (see `tick`). */
      onAgain?: (projectId: string) => void;
      onError: (err: Error) => void;
      /** Where the project's task worktrees live (removed once their task is merged). */
      worktreeRoot?: (projectId: string) => string;
      /** How long a merge waits for a locked main checkout (mergeLock.ts LOCK_WAIT_MS unless given). */
      lockWaitMs?: number;
    },
  ) {
    this.locks = new LockWaits(opts.lockWaitMs);
    this.cleanupDeps = { store, repos: opts.repos, worktreeRoot: opts.worktreeRoot, onError: opts.onError };
    this.carDeps = {
      store,
      repos: opts.repos,
      markMerged: (task, project, branch, sha, how) => this.markMerged(task, project, branch, sha, how),
      toAttention: (task, reason) => this.toAttention(task, reason),
      refusedPush: (tasks, err) => this.refusedPush(tasks, err),
    };
    this.conflictRuns = new ConflictRuns(store, {
      onConflict: (task, files) => opts.hooks.onConflict?.(task, files),
      owner: opts.owner, startConflictRun: opts.startConflictRun,
      toAttention: (task, reason, fields) => this.toAttention(task, reason, fields),
      baseOf: async (task) => baseBranchOf(await store.projects.get(task.projectId)),
      onChange: opts.onChange,
      onError: opts.onError,
    });
  }

  /**
   * Starts merging every project with approved work that is not merging already, and resolves once those
   * are done. Projects merge side by side, each on its own: its own repository, clone and lease, so one
   * project's train, push or clean-up never holds another's, and a tick called meanwhile starts the
   * projects whose work was approved since. (One tick for all, one project after another, four demo
   * projects' merges took 3.5 s each in bench:daemon with four workers, 0.8 s with one.) `only`: that project alone
   * (onAgain's tick: one of all asked again for the others, and two projects kept each other ticking for good).
   */
  async tick(only?: string): Promise<void> {
    // Beside the trains: a conflict run's start syncs its clone, and a silent remote there held every project's merges.
    const started: Promise<void>[] = [this.conflictRuns.openWaiting()];
    for (const projectId of (await this.dueProjects()).filter((id) => only === undefined || id === only)) {
      if (this.inFlight.has(projectId)) {
        this.dueAgain.add(projectId);
        continue;
      }
      // Work approved while the project merged or cleaned up goes at once, not at the next tick (up to tickMs later).
      const flight = this.mergeProjectRounds(projectId).finally(() => {
        this.inFlight.delete(projectId);
        if (this.dueAgain.delete(projectId)) this.opts.onAgain?.(projectId);
      });
      this.inFlight.set(projectId, flight);
      started.push(flight);
    }
    await Promise.all(started);
    // One at a time: two ticks ending together must not both finish the same parent.
    const parents = this.parents.then(() => finishParents(this.store, this.opts.onChange));
    this.parents = parents.catch(() => undefined);
    await parents;
  }

  /** Conflict runs waiting for a free slot: the orchestrator claims no new work until they have one. */
  get awaitingConflictRuns(): number {
    return this.conflictRuns.waiting;
  }

  /** Resolves when no project is merging. */
  async idle(): Promise<void> {
    while (this.inFlight.size) await Promise.all(this.inFlight.values());
    await this.parents;
  }

  /** Projects with approved work that may go now, the one with the oldest approval first. */
  private async dueProjects(): Promise<string[]> {
    const merging = await this.store.tasks.list({ status: 'merging', limit: 10_000 });
    for (const id of this.refused.keys()) if (!merging.some((t) => t.id === id)) this.refused.delete(id);
    this.locks.keepOnly(new Set(merging.map((t) => t.id)));
    const now = this.store.clock();
    const due = (t: Task) => (this.refused.get(t.id)?.at ?? 0) <= now && !this.conflictRuns.isWaiting(t.id);
    return [...new Set(merging.sort((a, b) => a.updatedAt - b.updatedAt).filter(due).map((t) => t.projectId))];
  }

  /**
   * A project's trains, round after round while work keeps landing (work approved while a train ran goes in
   * the next one at once, not a tick later; each task is tried once a tick), then its clean-ups: they need the
   * clone, which the next train needs first.
   */
  private async mergeProjectRounds(projectId: string): Promise<void> {
    const tried = new Set<string>();
    const landed: Landed[] = [];
    try {
      const project = await this.store.projects.get(projectId);
      try {
        for (let round = 0; round < MAX_ROUNDS; round++) {
          const trains = await this.mergeProject(project, tried);
          // Conflict runs start now that the lease is free: the run needs the clone, and main with the cars before it.
          for (const l of trains) for (const c of l.conflicts) await this.conflictRuns.open(c.task, c.message, c.files);
          for (const l of trains) for (const c of l.checks) await this.conflictRuns.openCheck(c.task, c.head);
          landed.push(...trains);
          if (!trains.some((l) => l.cleanups.length)) break;
        }
      } finally {
        for (const l of landed) await cleanUpLanded(this.cleanupDeps, project, l);
      }
    } catch (err) {
      // A shared remote that does not answer is the health report's to say (once), not the log's every tick.
      if (!isMaestroError(err, 'REMOTE_UNREACHABLE')) this.opts.onError(coerceError(err));
    }
  }

  /** The main checkout was locked when `task` was to merge: it stays in merging while the lock may be momentary (mergeLock.ts). */
  private async lockedOut(task: Task, err: MaestroError): Promise<void> {
    const verdict = this.locks.judge(task.id, err);
    if (verdict === 'give up') await this.toAttention(task, thenRetry(err.message, task));
    if (verdict === 'wait, first') await this.store.events.append({ projectId: task.projectId, taskId: task.id, type: 'merge.locked', payload: { lock: err.details?.lock ?? null, message: err.message } });
  }

  private async toAttention(task: Task, reason: string, fields: TransitionFields = {}): Promise<void> {
    await this.store.tasks.transition(task.id, 'needs_attention', { from: 'merging', fields: { ...fields, lastRunError: reason }, reason });
    this.opts.onChange();
  }

  /**
   * The project's trains (what each left to do comes back). On a shared remote the lease is taken inside `exclusive`
   * (a daemon waiting for its own clone holds no lease meanwhile), and the tasks are read under it: every
   * task approved by then rides along, and none that another daemon's train has just finished.
   */
  private async mergeProject(project: Project, tried: Set<string>): Promise<Landed[]> {
    const projectId = project.id;
    const landed: Landed[] = [];
    if (!remoteOf(project)) {
      const gone = checkoutGone(project);
      if (gone) {
        for (const task of await this.dueTasks(projectId, tried)) {
          tried.add(task.id);
          await this.toAttention(task, thenRetry(`${gone}; nothing was merged: put it back`, task));
        }
        return landed;
      }
      // The lease too: daemons on one host sharing a database would otherwise merge into this checkout at once.
      if (!(await takeMergeLease(this.store.db, this.lease(project)))) return landed;
      try {
        for (const train of this.trainsOf(await this.dueTasks(projectId, tried), tried)) landed.push(await this.land(project, project.repoPath, null, train));
      } finally {
        await releaseMergeLease(this.store.db, projectId, this.opts.owner);
      }
    } else if (this.opts.repos.reach.mayTry(projectId)) {
      // Another daemon's train under way: not even the clone is taken (runs' syncs wait for it), only to find the lease held.
      if (await mergeLeaseHeldElsewhere(this.store.db, this.lease(project))) return landed;
      await this.opts.repos.exclusive(projectId, async () => {
        if (!(await takeMergeLease(this.store.db, this.lease(project)))) return;
        try {
          const before = new Set((await this.dueTasks(projectId, tried)).map((t) => t.id));
          if (!before.size) return;
          // Each train starts from the remote's main: a refused push leaves this clone's main ahead of it. The
          // tasks are read again once the first sync is done: work approved meanwhile rides in this train, not
          // the next (bench:multihost: approvals come every second, a sync takes a third of a train). Such a task
          // goes only if the sync brought its reviewed commit: a conflict run publishes its commit just before
          // its outcome, and an older tip would be taken for a branch moved after its review.
          let clone = await this.opts.repos.sync(project);
          const due = (await this.dueTasks(projectId, tried)).filter((t) => before.has(t.id) || fetchedAsReviewed(clone, t));
          for (const [i, train] of this.trainsOf(due, tried).entries()) {
            if (i > 0) clone = await this.opts.repos.sync(project);
            landed.push(await this.land(project, clone, 'origin', train));
          }
        } finally {
          await releaseMergeLease(this.store.db, projectId, this.opts.owner);
        }
      });
    }
    return landed;
  }

  /** The project's approved tasks that may go now and were not tried in this round, oldest approval first. */
  private async dueTasks(projectId: string, tried: Set<string>): Promise<Task[]> {
    const merging = (await this.store.tasks.list({ status: 'merging', projectId, limit: 10_000 })).sort((a, b) => a.updatedAt - b.updatedAt);
    const now = this.store.clock();
    const due: Task[] = [];
    let checking = false;
    for (const task of merging) {
      const running = this.conflictRuns.waitingFor(task.id) ?? (await this.opts.runningRun(task.id)); // waits for a slot, or at work
      if (running === 'merge_check') checking = true;
      if (running || tried.has(task.id)) continue;
      if ((this.refused.get(task.id)?.at ?? 0) > now) continue; // its push is retried later
      // Another live daemon found its conflict (or its merge check) and owes it that run: merging it here would open a second.
      const owed = await conflictHeldElsewhere(this.store.db, { taskId: task.id, me: this.opts.owner, now, staleMs: DAEMON_STALE_LEASES * this.opts.leaseMs });
      if (owed === 'merge.check') checking = true;
      if (owed) continue;
      due.push(task);
    }
    return inQueueOrder(due, checking);
  }

  /** `due` in trains (each now tried in this round): the fresh ones together, up to MAX_TRAIN, each retried push alone. */
  private trainsOf(due: Task[], tried: Set<string>): Task[][] {
    const fresh: Task[] = [];
    const retries: Task[][] = [];
    for (const task of due) {
      tried.add(task.id);
      if (this.refused.has(task.id)) retries.push([task]);
      else fresh.push(task);
    }
    const trains: Task[][] = [];
    for (let i = 0; i < fresh.length; i += MAX_TRAIN) trains.push(fresh.slice(i, i + MAX_TRAIN));
    return [...trains, ...retries];
  }

  private lease(project: Project) {
    return { projectId: project.id, owner: this.opts.owner, now: this.store.clock(), leaseMs: this.opts.leaseMs };
  }

  /** Merges the train in `repo`; with a `remote`, the branches come from it and main goes back to it in one push. */
  private async land(project: Project, repo: string, remote: string | null, tasks: Task[]): Promise<Landed> {
    const landed: Landed = { repo, cleanups: [], conflicts: [], checks: [], gone: new Set() };
    const base = baseBranchOf(project);
    const { cars, baseTip } = await carsFor(this.carDeps, project, repo, remote, tasks);
    // Merged just before a crash, or by another daemon's train? Then record it; never merge twice.
    const inMain = await refsMergedInto(repo, base, cars.map((c) => c.ref));
    for (const car of cars.filter((c) => inMain.has(c.ref))) {
      await this.markMerged(car.task, project, car.branch, await landedAs(repo, base, car), 'already in main');
      landed.cleanups.push(car);
    }
    const toMerge = cars.filter((c) => !inMain.has(c.ref));
    if (!toMerge.length) return landed;
    let strategy: MergeStrategy;
    let checks: number;
    try {
      // A clone's main was just checked out from the remote's, forced clean; a project's own checkout is the person's.
      if (!remote) await assertMainCheckout(repo, base);
      // Main's .maestro/config.json names the strategy. One a merged change (or a person) broke is said on each task:
      // thrown from here it only reached the log, every tick, and the tasks stayed in merging for good.
      const config = loadProjectConfig(repo);
      strategy = config.mergeStrategy;
      checks = config.checks.length;
    } catch (err) {
      if (!(err instanceof MaestroError)) throw err;
      if (err.code === 'REPO_LOCKED') {
        for (const car of toMerge) await this.lockedOut(car.task, err);
        return landed;
      }
      const why = (car: Car) => {
        if (err.code === 'DIRTY_MAIN') return thenRetry(err.message, car.task);
        if (err.code === 'CONFIG_INVALID') return thenRetry(`${err.message}; nothing was merged: fix it on ${base} and commit it`, car.task);
        return err.message;
      };
      for (const car of toMerge) await this.toAttention(car.task, why(car));
      return landed;
    }
    const veto = async (car: Car) => {
      const v = await this.opts.hooks.beforeMerge?.(car.task, car.branch);
      return v && 'cancel' in v ? v.cancel : null;
    };
    const mustCheck = mustCheckFor(repo, strategy, checks);
    const outcomes = await runTrain({ repo, base, head: baseTip, strategy, cars: toMerge, veto, personsCheckout: !remote, mustCheck });
    for (const o of outcomes) {
      if (o.kind === 'attention') await this.toAttention(o.car.task, o.reason);
      if (o.kind === 'locked') await this.lockedOut(o.car.task, o.error);
      if (o.kind === 'conflict') landed.conflicts.push({ ...o.car, message: o.message, files: o.files });
      if (o.kind === 'check') landed.checks.push({ task: o.car.task, head: o.head });
    }
    // Said while the lease is held, and naming this daemon: another daemon's train, which may take the lease
    // before this one's conflict run starts (it waits for the lease's release, or for a slot), leaves the task alone.
    for (const c of landed.conflicts) {
      await this.store.events.append({ projectId: project.id, taskId: c.task.id, type: 'merge.conflict', payload: { branch: c.branch, message: c.message, files: c.files, owner: this.opts.owner } });
    }
    for (const o of outcomes) if (o.kind === 'check') await this.store.events.append(checkEvent(o, this.opts.owner));
    const merged = outcomes.flatMap((o) => (o.kind === 'merged' ? [o] : []));
    if (!merged.length) return landed;
    // On a shared remote the merges count once main is pushed; a refused push is retried later. The train's
    // branches (those found in main already too) leave the remote in the same push (atomic: with main or not at
    // all), one push fewer per train.
    if (remote) {
      const branches = project.config.keepBranches === true ? [] : [...landed.cleanups, ...merged.map((m) => m.car)].map((c) => c.branch);
      const gone = await this.pushTrain(project, repo, merged.map((m) => m.car.task), branches);
      if (!gone) return landed;
      landed.gone = new Set(gone);
    }
    for (const m of merged) {
      this.refused.delete(m.car.task.id);
      await this.markMerged(m.car.task, project, m.car.branch, m.sha, m.fastForward ? 'fast-forward' : 'merge commit', m.previousSha, { settingsFiles: m.settingsFiles, runsElsewhere: m.runsElsewhere });
      landed.cleanups.push(m.car);
    }
    return landed;
  }

  /**
   * Pushes the train's main, if this daemon still holds the lease (taken again, which extends it): one
   * whose lease lapsed meanwhile pushes nothing, and its cars wait for the next train. Returns whether
   * main is on the remote (null when not), with the `branches` that left it in the same push.
   */
  private async pushTrain(project: Project, repo: string, tasks: Task[], branches: string[]): Promise<readonly string[] | null> {
    if (!(await takeMergeLease(this.store.db, this.lease(project)))) {
      this.opts.onError(new MaestroError('GIT_FAILED', `the merge lease of project ${project.name} lapsed during a train of ${tasks.length}; nothing pushed, the merges are tried again`));
      return null;
    }
    try {
      return await this.opts.repos.pushMain(project, repo, branches);
    } catch (err) {
      await this.refusedPush(tasks, err);
      return null;
    }
  }

  /** The remote refused a push: say so in each task's events and try again later (1 s, 2 s, … a minute). */
  private async refusedPush(tasks: Task[], err: unknown): Promise<void> {
    if (!(err instanceof MaestroError) || err.code !== 'GIT_FAILED') throw err;
    for (const task of tasks) {
      const waitMs = this.refused.get(task.id)?.waitMs ?? PUSH_RETRY_FIRST_MS;
      this.refused.set(task.id, { at: this.store.clock() + waitMs, waitMs: Math.min(waitMs * 2, PUSH_RETRY_MAX_MS) });
      await this.store.events.append({ projectId: task.projectId, taskId: task.id, type: 'git.push_failed', payload: { message: err.message, retryInMs: waitMs } });
    }
    this.opts.onError(err);
  }

  /** `previousSha`: main before the merge, so the merged change can still be shown once its branch is gone. */
  private async markMerged(task: Task, project: Project, branch: string, sha: string | null, how: string, previousSha: string | null = null, files: { settingsFiles?: string[]; runsElsewhere?: string[] } = {}): Promise<void> {
    await this.store.tasks.recordMerge({ taskId: task.id, projectId: project.id, branch, sha, how, previousSha, ...files, title: task.title });
    this.opts.onChange();
  }
}
