/**
 * The orchestrator loop. A tick runs when a worker exits, when a task is created, edited or moves (its event,
 * from this daemon or another; not for the moves of a task another daemon holds, tickTriggers.ts), and every
 * tickMs besides:
 *
 *   renew leases → reconcile owned tasks (WorkerManager spawn / adopt / reap,
 *   Ingestor follow) → Scheduler.claim → MergeCoordinator → auto-approvals
 *
 * Reconciling is also crash recovery: every in-flight task this daemon owns
 * must have a running run with a live worker. A live worker is adopted (after
 * a kill -9 of the daemon, workers keep running in their own process groups);
 * a dead one is restarted on the same run directory, where stages.json makes
 * it skip finished stages; a task with no run gets the run its status calls
 * for. The owner id is stable for a $MAESTRO_HOME, so a restarted daemon
 * recognises its claims.
 */
import { hostname } from 'node:os';
import { worktreeRoot } from '../git/worktree.js';
import type { MaestroConfig } from '../config/config.js';
import { coerceError, isMaestroError } from '../core/errors.js';
import { IN_FLIGHT_STATUSES } from '../core/status.js';
import type { Run, Task } from '../core/types.js';
import { DAEMON_STALE_LEASES, beatDaemon, registerDaemon, unregisterDaemon } from '../store/ops/daemons.js';
import { settingsOf } from './daemonSettings.js';
import { steeringRecorder } from './remoteSteering.js';
import { ProjectRepos } from './repos.js';
import { trackResource } from '../lib/resources.js';
import type { Store } from '../store/store.js';
import type { Bus } from '../lib/bus.js';
import { Ingestor } from './ingestor.js';
import { autoApprove } from './autoApprove.js';
import { workerEnvsOf } from './jobs.js';
import { knowledgeFinished, publishTaskBranch, pruneEndedScratch, pruneFinishedWorktrees } from './runAftermath.js';
import { KnowledgeBridge } from '../knowledge/lifecycle/bridge.js';
import { MergeCoordinator } from './mergeCoordinator.js';
import { backoffMs, takesResult } from './outcomes.js';
import { missingFolders } from './projectFolder.js';
import { perProjectSlots, Scheduler } from './scheduler.js';
import { WorkerManager } from './workerManager.js';
import { MAX_WORKER_RESTARTS, SECOND, WORKER_SILENCE_MS, WORKTREE_PRUNE_MS, type OrchestratorOptions } from './orchestratorOptions.js';
import { RunStarter } from './runStarter.js';
import { KnowledgeEnds } from './knowledgeEnds.js';
import { TickTriggers } from './tickTriggers.js';
import { applyLeftovers, releaseBetweenStages } from './handOver.js';

export { MAX_WORKER_RESTARTS, WORKER_SILENCE_MS, WORKTREE_PRUNE_MS, type OrchestratorHooks, type OrchestratorOptions } from './orchestratorOptions.js';

export class Orchestrator {
  readonly owner: string;
  readonly scheduler: Scheduler;
  readonly workers: WorkerManager;
  readonly ingestor: Ingestor;
  readonly merges: MergeCoordinator;
  readonly repos: ProjectRepos;
  /** What `start` set going that `stop` ends first (the tick, merge and prune timers, the event listener); null when stopped. */
  private halts: Array<() => void> | null = null;
  private leaseTimer: NodeJS.Timeout | null = null;
  /** Merge ticks under way: each starts the projects with newly approved work (the others are merging already). */
  private readonly mergeTicks = new Set<Promise<void>>();
  private ticking: Promise<void> | null = null;
  private kicked = false;
  private stopping = false;
  private readonly knowledge: KnowledgeBridge;
  private readonly knowledgeEnds: KnowledgeEnds;
  private readonly restarts = new Map<string, number>();
  /** Runs whose worker this daemon found running from before its start (a restart, a kill -9), said once each. */
  private readonly adopted = new Set<string>();
  private readonly runStarter: RunStarter;
  /** When this daemon last beat and renewed its leases (keepAlive). */
  private aliveAt = -Infinity;
  /** Slots the last tick left free after its claims (none claimable means no new claim until a tick finds more). */
  private freeAfterTick = Infinity;
  private readonly triggers: TickTriggers;

  constructor(
    private readonly store: Store,
    private readonly bus: Bus,
    private readonly config: MaestroConfig,
    private readonly opts: OrchestratorOptions,
  ) {
    this.owner = config.name;
    // Its home is the daemon's: the run folders it links lie in the home's runs/.
    this.knowledge = opts.knowledge ?? new KnowledgeBridge({ env: { MAESTRO_HOME: config.home } });
    this.knowledgeEnds = new KnowledgeEnds({ log: opts.log, slowMs: opts.knowledgeEndSlowMs });
    this.repos = new ProjectRepos(config.home, { retryMs: opts.remoteRetryMs, stallMs: opts.gitStallMs, onReachability: opts.onRemote, onSteeringMoved: steeringRecorder(store, opts.onError), onError: opts.onError });
    const hooks = opts.hooks ?? {};
    this.scheduler = new Scheduler(store, {
      owner: this.owner,
      leaseMs: config.leaseMs,
      guard: hooks.beforeClaim,
      // The incremental ranking disagreed with a full rebuild: scores were stale (never claims), say so.
      onDrift: (tasks) => {
        if (tasks) this.opts.log?.info({ tasks }, 'scheduler ranking rebuilt: the incremental ranking had drifted');
      },
    });
    this.workers = new WorkerManager({ onExit: () => this.kick(), warm: config.warmWorkers, nice: config.workerNice });
    this.ingestor = new Ingestor(store, bus, {
      owner: this.owner,
      leaseMs: config.leaseMs,
      onChange: opts.onChange,
      onError: opts.onError,
      // The branch is on the remote before the outcome is committed: once it is, another daemon may review or merge the task.
      beforeFinal: (run) => publishTaskBranch(this.store, this.repos, config.home, run, opts.onError),
      // The tick may start other work at once; the task's next run waits for this run's knowledge (knowledgeEnds.ts).
      onFinal: (run) => {
        const end = this.knowledgeEnds.add(run, knowledgeFinished(this.store, this.knowledge, config.home, run, this.opts.onError));
        this.kick();
        return end;
      },
      preFinal: opts.preFinal,
      log: opts.log,
    });
    this.triggers = new TickTriggers(this.owner);
    this.runStarter = new RunStarter({ store, config, opts, repos: this.repos, knowledge: this.knowledge, knowledgeEnds: this.knowledgeEnds, workers: this.workers, ingestor: this.ingestor });
    this.merges = new MergeCoordinator(store, {
      hooks,
      startConflictRun: (task, kind) => this.runStarter.startConflict(task, kind),
      runningRun: async (taskId) => (await this.store.runs.list({ taskId, status: 'running' }))[0]?.kind ?? null,
      repos: this.repos,
      owner: this.owner, leaseMs: config.leaseMs,
      onChange: opts.onChange,
      // After pending I/O: a tick with nothing to do reads only SQLite (microtasks); chained, they starved the event loop.
      onAgain: (projectId) => this.kickMerges(new Promise((r) => setImmediate(r)), projectId),
      onError: opts.onError,
      worktreeRoot: (projectId) => worktreeRoot(config.home, projectId),
    });
  }

  start(): void {
    if (this.halts) return;
    this.stopping = false;
    this.knowledgeEnds.start();
    this.workers.start();
    // The worktrees of finished tasks, then the agents' scratch folders of ended runs.
    const prune = () => void pruneFinishedWorktrees(this.store, this.config.home, this.opts).then(() => pruneEndedScratch(this.store, this.config.home, this.opts));
    prune();
    const every = (fn: () => void, ms: number) => {
      const timer = setInterval(fn, ms);
      return () => clearInterval(timer);
    };
    // The heartbeat and the leases are renewed on their own clock: a slow tick (a long merge or fetch) must never let them lapse.
    this.leaseTimer = setInterval(() => void this.keepAlive().catch((err) => this.opts.onError(coerceError(err))), this.keepAliveMs);
    this.halts = [
      every(prune, WORKTREE_PRUNE_MS),
      every(() => this.kick(), this.config.tickMs),
      // Merges keep their own cadence: a tick slowed by starting runs (a fetch per run) must not hold approved work back.
      every(() => this.kickMerges(), this.config.tickMs),
      trackResource('timer', 'orchestrator tick', () => this.stop({ graceMs: 0 })),
      // A task created, edited or moved (by a person, an approval, a merge, or another daemon) may have made work
      // claimable or a stage startable: a tick now, not at the next one (tickMs, 1 s by default, is the fallback).
      // What each event asks for is TickTriggers': a move of a task another daemon holds is that daemon's to act on.
      this.bus.onEvent((e) => {
        const want = this.triggers.wants(e, this.freeAfterTick > 0);
        if (want === 'tick') this.kick();
        else if (want === 'merges') this.kickMerges();
      }),
    ];
    this.kick();
  }

  /**
   * Runs a tick soon (coalesced with one already running). Not once stopping: a worker's exit or a finished ingest
   * may still ask after stop(), when the store may be closed.
   */
  kick(): void {
    if (this.stopping) return;
    if (this.ticking) {
      this.kicked = true;
      return;
    }
    this.ticking = (async () => {
      do {
        this.kicked = false;
        try {
          await this.tick();
        } catch (err) {
          this.opts.onError(coerceError(err));
        }
      } while (this.kicked && !this.stopping);
      this.ticking = null;
    })();
  }

  /** Resolves when no tick, merge tick or run start is under way. */
  async idle(): Promise<void> {
    for (;;) {
      if (this.ticking) await this.ticking;
      else if (this.mergeTicks.size) await Promise.all(this.mergeTicks);
      else if (this.runStarter.starting) await this.runStarter.idle();
      else break;
    }
    await this.merges.idle();
    await this.repos.idle();
  }

  /** Registers this daemon's name on the database; refused while another live daemon holds it. */
  async register(): Promise<void> {
    await registerDaemon(this.store.db, { name: this.owner, host: hostname(), pid: process.pid, home: this.config.home, now: this.store.clock(), staleMs: DAEMON_STALE_LEASES * this.config.leaseMs, settings: settingsOf(this.config) });
  }

  async tick(): Promise<void> {
    // Before expireClaims: a daemon back from a pause (a laptop asleep) renews its own leases before it could take its own tasks back. Not on every tick (a tick per task event, on every daemon): only once the timer's is old.
    if (this.store.clock() - this.aliveAt >= this.keepAliveMs) await this.keepAlive();
    // Expired tasks back to ready or taken over, each with its event, before reconcile (a taken-over task starts first); with no slot free, a takeover is left to a daemon with one (TakeOver.busy).
    const busy = this.freeAfterTick <= 0 || this.runStarter.slotsTaken >= this.config.maxConcurrentRuns - this.config.reservedConflictSlots;
    const expired = await this.store.tasks.expireClaims({ owner: this.owner, leaseMs: this.config.leaseMs, busy });
    if (expired.length) this.opts.log?.info({ tasks: expired }, 'took back (or over) tasks whose claimer stopped renewing its lease');
    const { inFlight, waiting, starts } = await this.reconcile();
    if (!this.stopping) {
      const running = this.runStarter.slotsTaken;
      // A full disk or a read-only home: claim nothing, since a new run would only fail on the disk.
      const paused = this.opts.mayClaim?.() === false;
      // Claimed tasks waiting for a slot for their next stage (or their conflict run) go first: no new claim while they wait.
      const free = paused ? 0 : Math.max(0, this.config.maxConcurrentRuns - this.config.reservedConflictSlots - running - waiting - this.merges.awaitingConflictRuns);
      const projects = await this.store.projects.list();
      this.opts.onFolders?.(missingFolders(projects));
      const slots = perProjectSlots(inFlight, projects, this.owner, this.config.maxConcurrentRunsPerProject);
      // On a shared remote a project's hooks (before:task:claim first) are main's, read from this daemon's clone:
      // made before a claim (in the background), and only when one can be made (never onto a full disk or with
      // every slot taken). A remote that stopped answering holds its project's claims too.
      const unready = free > 0 ? this.repos.unready(projects, () => this.kick(), this.opts.onError) : new Set<string>();
      const won = await this.scheduler.claim(free, (projectId) => (unready.has(projectId) ? 0 : slots(projectId)));
      this.freeAfterTick = free - won.length;
      // Their workers start now, while the runs are prepared (the clone's sync, the brief), not after.
      this.workers.prestart(won.flatMap((t) => workerEnvsOf(projects.find((p) => p.id === t.projectId), this.opts.env, this.opts.workerEnv)));
      // Side by side, and not waited for: runs claimed together share their clone's sync (ProjectRepos.prepare).
      const claimed = this.repos.mark();
      starts.push(...won.map((task) => this.runStarter.begin(task, claimed)));
      if (won.length) this.opts.onChange();
      await autoApprove(this.store, this.opts, projects, inFlight);
      // After the approvals: work approved just now goes in this round of merges. After the runs' starts too: a
      // train takes the clone, and one started on the approval's event went ahead of the runs' syncs (tried).
      this.kickMerges(Promise.all(starts));
    }
  }

  /** This daemon's heartbeat and its claims' leases, a quarter of a lease apart (at most; the tick may come first). */
  private get keepAliveMs(): number {
    return Math.max(100, Math.floor(this.config.leaseMs / 4));
  }

  private async keepAlive(): Promise<void> {
    const now = this.store.clock();
    await beatDaemon(this.store.db, this.owner, now);
    await this.store.tasks.renewOwnedLeases(this.owner, this.config.leaseMs);
    this.aliveAt = now;
  }

  /**
   * Merges beside the tick (fetches and pushes are slow), a project never in two at once, once `after` (a tick's
   * run starts) has settled; errors are logged, never unhandled rejections.
   */
  private kickMerges(after?: Promise<unknown>, only?: string): void {
    if (this.stopping) return;
    const tick: Promise<void> = Promise.resolve(after)
      .then(() => this.merges.tick(only))
      .catch((err) => this.opts.onError(coerceError(err)))
      .finally(() => this.mergeTicks.delete(tick));
    this.mergeTicks.add(tick);
  }

  /**
   * Settles this daemon's runs and starts the next stage of its claimed tasks that have no run, while
   * the daemon runs fewer than maxConcurrentRuns: a stage beyond that waits for a slot (bench:daemon's
   * four workers ran up to eleven stages at once, a process each). Returns the in-flight
   * tasks it read, how many claimed tasks are waiting for a slot, and the starts it began (not waited for).
   */
  private async reconcile(): Promise<{ inFlight: Task[]; waiting: number; starts: Promise<void>[] }> {
    const asking: string[] = [];
    // Runs whose task was cancelled or moved on without them: stop the worker, end the run.
    const running = await this.store.runs.list({ status: 'running', limit: 100_000 });
    // A run being started is recorded before its worker: it is its starter's, not a dead worker's.
    const runs = running.filter((run) => run.owner === this.owner && !this.runStarter.isStarting(run.taskId));
    const busy = new Set(running.map((run) => run.taskId));
    // Their tasks in one read (at most maxConcurrentRuns), not one read each on every tick.
    const tasks = new Map((await this.store.tasks.byIds(runs.map((run) => run.taskId))).map((t) => [t.id, t]));
    for (const run of runs) {
      const task = tasks.get(run.taskId) ?? (await this.store.tasks.row(run.taskId));
      const live = IN_FLIGHT_STATUSES.includes(task.status) && takesResult(task, run, this.owner); // as its result would be
      if (!live) {
        this.workers.kill(run);
        this.ingestor.unfollow(run.id);
        // A failed write is said, not dropped; the next tick finds the run still running and tries again.
        await this.store.runs.finish({ id: run.id, status: 'cancelled', error: `task is ${task.status}` }).catch((err) => this.opts.onError(coerceError(err)));
        continue;
      }
      if (task.status === 'awaiting_input') asking.push(run.id);
      await this.superviseRun(run, task);
    }
    this.workers.waitingForAnswer(asking);
    // Listed after the runs above settled: a task whose run just failed must not look owned and idle.
    const inFlight = await this.store.tasks.list({ status: IN_FLIGHT_STATUSES, limit: 100_000 });
    let waiting = 0;
    const starts: Promise<void>[] = [];
    for (const task of inFlight.filter((t) => t.claimedBy === this.owner && t.status !== 'merging')) {
      if (this.stopping) break;
      // Its shared remote does not answer: the background retry (ProjectRepos.unready) tries it, never the tick.
      if (this.repos.reach.failed(task.projectId)) continue;
      // A run read running above is one (if it ended since, its task's event brings the next tick); only a task
      // without one is asked again, one query instead of one per in-flight task on every tick.
      if (busy.has(task.id) || this.runStarter.isStarting(task.id) || (await this.store.runs.list({ taskId: task.id, status: 'running' })).length) continue;
      if (this.runStarter.slotsTaken >= this.config.maxConcurrentRuns) waiting++;
      else starts.push(this.runStarter.begin(task));
    }
    return { inFlight, waiting, starts };
  }

  private async superviseRun(run: Run, task: Task): Promise<void> {
    if (this.workers.isAlive(run.id, run.workerPid)) {
      if (!this.workers.started(run.id) && !this.adopted.has(run.id)) {
        // Its worker outlived the daemon before this one: taken over, not started again. Said, so that after a crash
        // a person reads what recovery did (before, the task's events ran on as if nothing had happened).
        this.adopted.add(run.id);
        await this.store.events.append({ projectId: task.projectId, taskId: task.id, runId: run.id, traceId: run.traceId, type: 'run.adopted', payload: { kind: run.kind, pid: run.workerPid } });
      }
      this.ingestor.follow(run);
      const last = this.ingestor.lastSign.get(run.id);
      if (last === undefined) this.ingestor.lastSign.set(run.id, Date.now());
      else if (Date.now() - last > (this.opts.workerSilenceMs ?? WORKER_SILENCE_MS) && task.status !== 'awaiting_input') {
        this.workers.kill(run);
        await this.failRun(run, task, 'WORKER_SILENT: the worker stopped heartbeating and was killed');
      }
      return;
    }
    // Its final record being applied (the branch pushed first, as long as the remote takes): not the tick's to wait
    // for, which would hold every project's work meanwhile. Looked at again once that is over.
    const pending = this.ingestor.pending(run.id);
    if (pending) {
      void pending.then(() => this.kick());
      return;
    }
    // Dead worker: read what it left; a final record settles the run.
    await this.ingestor.ingest(run);
    const fresh = await this.store.runs.get(run.id);
    if (fresh.status !== 'running' || this.stopping) return;
    const n = (this.restarts.get(run.id) ?? 0) + 1;
    this.restarts.set(run.id, n);
    if (n > MAX_WORKER_RESTARTS) return this.failRun(run, task, `WORKER_DIED: the worker died ${n - 1} times on this run`);
    await this.store.events.append({ projectId: task.projectId, taskId: task.id, runId: run.id, traceId: run.traceId, type: 'run.resumed', payload: { restart: n } });
    try {
      await this.runStarter.spawn(fresh);
    } catch (err) {
      // A run whose job.json is damaged cannot resume, however often it is tried: it ends now, saying why.
      if (!isMaestroError(err, 'JOB_INVALID')) throw err;
      await this.failRun(run, task, `JOB_INVALID: the run cannot resume: ${err.message}`);
    }
  }

  private async failRun(run: Run, task: Task, error: string): Promise<void> {
    this.ingestor.unfollow(run.id);
    await this.store.runs.failWithTask({ run, task, owner: this.owner, error, backoffMs });
    this.opts.onChange();
  }

  /**
   * Stops claiming. With a grace period, each running worker may first finish
   * the stage it is in (its next `phase … done` record) for up to `graceMs`;
   * then it gets SIGTERM, ends its current record and exits. Its run stays
   * `running` and resumes from stages.json on the next start; the rest is handed over (handOver.ts). `detach`
   * leaves workers running (for adoption by the next daemon) and hands nothing over. `onHandOver`: its workers stopped, the hand-over begins.
   */
  async stop(opts: { graceMs: number; detach?: boolean; onHandOver?: () => void }): Promise<void> {
    this.stopping = true;
    // A start waiting for its task's previous run's knowledge gives up: idle() below would wait for it.
    this.knowledgeEnds.stop();
    const handOver = { store: this.store, owner: this.owner, onError: this.opts.onError, log: this.opts.log };
    for (const halt of this.halts ?? []) halt();
    this.halts = null;
    await this.idle();
    // Workers may still finish their stage: keep their leases alive until they are stopped.
    const stopLeases = () => {
      if (this.leaseTimer) clearInterval(this.leaseTimer);
      this.leaseTimer = null;
    };
    if (opts.detach) {
      stopLeases();
      await this.workers.detachAll();
    } else {
      const since = Date.now();
      const deadline = since + opts.graceMs;
      const midStage = () => this.workers.runIds().filter((id) => (this.ingestor.stageDoneAt.get(id) ?? 0) < since);
      while (this.workers.running > 0 && Date.now() < deadline && midStage().length) await new Promise((r) => setTimeout(r, 50));
      // Said, not only done: a person who pressed Ctrl-C once should learn that work was cut off and what happens to it.
      for (const runId of midStage()) this.opts.log?.info({ runId, graceMs: opts.graceMs }, 'stage still running when the grace period ended: stopped mid-stage; the run resumes from its last finished stage at the next start');
      await this.workers.stopAll(Math.min(5 * SECOND, opts.graceMs));
      for (const id of this.workers.runIds()) this.opts.log?.info({ runId: id }, 'worker did not stop in time; killed');
      opts.onHandOver?.();
      // Results of runs that finished meanwhile, applied: their tasks stand at their next stage (handOver.ts).
      await applyLeftovers(handOver, this.ingestor);
      stopLeases();
    }
    await this.ingestor.stop();
    // Not when detached: its workers run on for the next daemon of this home, which renews these claims.
    if (!opts.detach) await releaseBetweenStages(handOver);
    await unregisterDaemon(this.store.db, this.owner).catch(() => undefined);
  }
}
