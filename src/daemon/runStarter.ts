/**
 * RunStarter: starts the run a claimed task's status calls for. It moves the task on (queued → executing, say)
 * under its fence, brings the repository the run works in up to date (a shared remote's clone: its sync and the
 * task branch), writes the run's job with the knowledge brief, records the run with its event, and hands the run
 * directory to a worker. A run that cannot start leaves the task as runNotStarted says, never a run `running`
 * without a worker.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { worktreeRoot } from '../git/worktree.js';
import type { MaestroConfig } from '../config/config.js';
import { MaestroError, coerceError } from '../core/errors.js';
import { checkStart, reviewedCommit } from '../core/reviewed.js';
import type { Project, Run, RunKind, Task } from '../core/types.js';
import { branchName, readJob, writeJobOffLoop } from '../executor/protocol/job.js';
import { isAncestor } from '../git/merge.js';
import type { KnowledgeBridge } from '../knowledge/lifecycle/bridge.js';
import { newId } from '../store/rows.js';
import type { Store } from '../store/store.js';
import type { Ingestor } from './ingestor.js';
import type { KnowledgeEnds } from './knowledgeEnds.js';
import { buildJob, projectAndOthers, runKindFor, workerEnvFor } from './jobs.js';
import { ridersOf } from './mergeBatch.js';
import { SECOND, type OrchestratorOptions } from './orchestratorOptions.js';
import { baseBranchOf, remoteOf, type ProjectRepos } from './repos.js';
import { holdsClaim, tryKnowledge } from './runAftermath.js';
import { runNotStarted } from './runNotStarted.js';
import type { WorkerManager } from './workerManager.js';

export interface RunStarterParts {
  store: Store;
  config: MaestroConfig;
  opts: OrchestratorOptions;
  repos: ProjectRepos;
  knowledge: KnowledgeBridge;
  /** The knowledge ends of the tasks' last runs, which their next runs wait for. */
  knowledgeEnds: KnowledgeEnds;
  workers: WorkerManager;
  ingestor: Ingestor;
}

export class RunStarter {
  private readonly owner: string;
  /** Starts under way (begin, track), by task: each holds a slot until its worker runs. */
  private readonly starts = new Map<string, Promise<unknown>>();

  constructor(private readonly parts: RunStarterParts) {
    this.owner = parts.config.name;
  }

  /**
   * startFor without waiting for it: the tick goes on (claims, approvals, other projects' runs) while the run's
   * clone syncs and its job is written. A tick that waited held every project's work for as long as a fetch from a
   * silent remote took (up to gitStallMs), and in bench:multihost claimed a second task 0.4 s after the first.
   * A task whose start is under way is not started again. The promise settles (never rejects) once the start is over.
   */
  begin(task: Task, syncedAfter?: number): Promise<void> {
    if (this.starts.has(task.id)) return Promise.resolve();
    return this.track(task.id, this.startFor(task, syncedAfter)).catch((err) => this.parts.opts.onError(coerceError(err)));
  }

  /** Counts `start` as a start of the task's run until it settles. */
  async track<T>(taskId: string, start: Promise<T>): Promise<T> {
    this.starts.set(taskId, start);
    try {
      return await start;
    } finally {
      if (this.starts.get(taskId) === start) this.starts.delete(taskId);
    }
  }

  /** Whether a run of the task is being started: its run may be recorded before its worker is. */
  isStarting(taskId: string): boolean {
    return this.starts.has(taskId);
  }

  /** Starts under way: each will hold a slot. */
  get starting(): number {
    return this.starts.size;
  }

  /** Slots held: by running workers (WorkerManager.slotsInUse), and by runs being started. */
  get slotsTaken(): number {
    return this.parts.workers.slotsInUse + this.starts.size;
  }

  /** Resolves when no start is under way. */
  async idle(): Promise<void> {
    while (this.starts.size) await Promise.allSettled(this.starts.values());
  }

  /**
   * Creates the run a claimed task's status calls for and starts its worker. `syncedAfter`: a ProjectRepos mark;
   * a clone synced since it will do (runs claimed together share one sync).
   */
  async startFor(task: Task, syncedAfter?: number): Promise<void> {
    const { store, opts } = this.parts;
    const fence = { id: task.id, owner: this.owner, attempt: task.attempt };
    let kind: RunKind = runKindFor(task).kind;
    try {
      // The run the task's status calls for NOW: `task` may come from a list read before the
      // ingestor moved it on (executing → reviewing), and a stale status would start its execute again.
      const fresh = await store.tasks.row(task.id);
      if (fresh.claimedBy !== this.owner || fresh.attempt !== task.attempt) return;
      const next = runKindFor(fresh);
      kind = next.kind;
      const status = next.status;
      if (fresh.status !== status) {
        if (!(await store.tasks.advance(fence, fresh.status, status))) return;
      }
      await this.create({ ...fresh, status }, kind, syncedAfter);
    } catch (err) {
      await runNotStarted(store, { owner: this.owner, task, kind, onError: opts.onError }, coerceError(err));
    }
    opts.onChange();
  }

  /**
   * A merge train's conflict run (or merge check) for the task, if a slot is free; false when none is. A start given
   * up at a stop counts as made: the task's next merge, on whichever daemon, opens the run again.
   */
  async startConflict(task: Task, kind: 'conflict' | 'merge_check'): Promise<boolean> {
    if (this.slotsTaken >= this.parts.config.maxConcurrentRuns) return false;
    await this.track(task.id, this.create(task, kind));
    return true;
  }

  /**
   * The run of `kind` for the task as it stands, with its worker started; null when the daemon stopped while the
   * start waited for the knowledge end of the task's previous run.
   */
  async create(task: Task, kind: RunKind, syncedAfter?: number): Promise<Run | null> {
    const { store, config, opts, repos, knowledge, knowledgeEnds } = this.parts;
    // Not while the task's previous run is finishing its knowledge (knowledgeEnds.ts): this run's brief reads the
    // session that end settles, and its start writes the session that end is writing.
    if (!(await knowledgeEnds.settled(task.id))) return null;
    // The project, and (in the sandbox) the others, hidden from the run.
    const { project: registered, others: otherProjects } = await projectAndOthers(store, task.projectId, !!config.agentSandbox);
    const history = await store.runs.list({ taskId: task.id });
    // On a shared remote: this host's clone, with main and the task's branch brought from the remote.
    const repoPath = await repos.prepareRun(registered, branchName(task.id, task.version), {
      // The commit to review (the execute's, or a conflict run's), or the approved one a merge check merges main onto.
      commit: kind === 'review' || kind === 'merge_check' ? reviewedCommit(task) : null,
      counted: reviewedCommit(task),
      published: history.some((r) => r.kind === 'execute' || r.kind === 'conflict' || r.kind === 'merge_check'),
      holds: () => holdsClaim(store, { id: task.id, owner: this.owner, attempt: task.attempt }),
      after: syncedAfter,
    });
    if (kind === 'review') await assertWorkReachable(repoPath, task, history, this.owner);
    const project = { ...registered, repoPath };
    // Runs branch from (and diff against) the remote's main as last fetched, never this clone's local main:
    // a merge in this clone moves local main before its push, and a refused push leaves it ahead of the remote.
    if (remoteOf(registered)) project.config = { ...registered.config, baseBranch: `origin/${baseBranchOf(registered)}` };
    const runId = newId('r');
    const traceId = randomUUID();
    const runDir = join(config.home, 'runs', task.id, runId);
    mkdirSync(runDir, { recursive: true });
    const brief = (await tryKnowledge(store, task, 'brief', () => knowledge.briefFor(task, project.repoPath), opts.onError)) ?? '';
    const job = buildJob({ runId, traceId, kind, task, project, history, worktreeRoot: worktreeRoot(config.home, project.id), env: opts.env, heartbeatMs: opts.heartbeatMs ?? 2 * SECOND, knowledge: brief, sandbox: config, otherProjects });
    if (kind === 'execute' && opts.hooks?.beforeExecute) {
      const veto = await opts.hooks.beforeExecute(task, job as unknown as Record<string, unknown>);
      if (veto && 'cancel' in veto) throw new MaestroError('BAD_INPUT', `before:execute hook cancelled: ${veto.cancel}`);
    }
    if (kind === 'merge_check') {
      // Where its branch starts (before a chain checked earlier), and the changes checked together with it (mergeBatch.ts).
      job.mergeFrom = checkStart(task) ?? undefined;
      job.mergeBatch = await ridersOf(store, task.id);
    }
    await writeJobOffLoop(runDir, job);
    await tryKnowledge(store, task, 'run-started', () => knowledge.onRunStarted({ task, run: { id: runId, kind }, runDir, repoPath: project.repoPath }), opts.onError);
    const run = await store.runs.start({ id: runId, taskId: task.id, kind, model: null, traceId, attempt: task.attempt, runDir, owner: this.owner });
    opts.log?.info({ traceId, runId, taskId: task.id, kind, runDir }, 'run started');
    try {
      await this.spawn(run, registered);
    } catch (err) {
      // No worker: a run left `running` would wait for a heartbeat that never comes. End it with the reason;
      // startFor then moves the task to needs_attention.
      await store.runs.finish({ id: run.id, status: 'failed', error: `the worker could not start: ${coerceError(err).message}` }).catch((e) => opts.onError(coerceError(e)));
      throw err;
    }
    return run;
  }

  /** Starts a worker on the run's directory (a new run, or one resumed after its worker died) and follows it. */
  async spawn(run: Run, project?: Project): Promise<void> {
    const { store, opts, workers, ingestor } = this.parts;
    // The worker, and the agent and checks it runs, see an allowlisted environment: never the daemon's token or database URL.
    const env = workerEnvFor(readJob(run.runDir!).provider, project ?? (await store.projects.get((await store.tasks.row(run.taskId)).projectId)), opts.workerEnv);
    const handle = workers.spawn(run.id, run.runDir!, env);
    void store.runs.setWorker(run.id, handle.pid).catch((err) => opts.onError(coerceError(err)));
    ingestor.lastSign.set(run.id, Date.now());
    ingestor.follow({ ...run, workerPid: handle.pid });
  }
}

/**
 * A review of work another daemon did (a task taken over at reviewing: store/ops/claim.ts TAKEN_OVER_AT_STAGE) needs
 * that work here: the commit to review on the task branch that prepareRun fetched from the shared remote. When its
 * daemon stopped before its push landed, the commit lives only in that daemon's worktree: WORK_NOT_PUBLISHED, and
 * runNotStarted sends the task to ready saying so. Work this daemon did itself is in its clone: nothing to check.
 */
async function assertWorkReachable(repoPath: string, task: Task, history: readonly Run[], owner: string): Promise<void> {
  const work = history.filter((r) => r.kind === 'execute' || r.kind === 'conflict').sort((a, b) => b.startedAt - a.startedAt)[0];
  if (!work || work.owner === owner) return;
  const branch = branchName(task.id, task.version);
  const commit = reviewedCommit(task);
  const there = await isAncestor(repoPath, commit ?? `refs/heads/${branch}`, `refs/heads/${branch}`).catch(() => false);
  if (there) return;
  const what = commit ? `its commit ${commit.slice(0, 12)}` : 'its branch';
  throw new MaestroError('WORK_NOT_PUBLISHED', `The execute of ${task.id} finished on daemon ${work.owner ?? 'another daemon'}, but ${what} was not on the shared remote (its branch ${branch} was not pushed there before that daemon stopped): the task runs again from ready.`, {
    details: { taskId: task.id, branch, commit, daemon: work.owner },
  });
}
