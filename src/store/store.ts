/**
 * The Store: the repositories over one DBAdapter, with an injected clock.
 * Each repository method is one store operation (src/store/ops/*); the ones
 * that change several rows run in one transaction, and every status change
 * appends its event in the same transaction, so the log never disagrees with
 * the state.
 */
import type { MaestroEvent, RunKind, RunStatus } from '../core/types.js';
import type { DBAdapter, Queryable, TransactionOptions } from './db.js';
import { appendEvent, appendEventOnce, eventsByIds, lastEventId, listEvents, taskChangesAfter, type NewEvent } from './ops/events.js';
import { listDecisions, recordDecision, type SchedulerDecision } from './ops/decisions.js';
import { listApprovals } from './ops/gates.js';
import { daemonLastHeard, daemonsNamed, listDaemons } from './ops/daemons.js';
import { runDurations, tasksByStatus, usageByProject } from './ops/metrics.js';
import { failRunAndTask, type FailRunOptions } from './ops/failRun.js';
import { createRun, finishRun, getRun, listRuns, setOutboxProgress, setRunWorker, startRun } from './ops/runs.js';
import { runKnowledgeOf, storeRunKnowledge } from './ops/runKnowledge.js';
import { withFaults, type StoreFaults } from './faults.js';
import { projectRecords } from './projectOps.js';
import { taskClaims, taskGates, taskReads, taskRecords, type TaskOpsContext } from './taskOps.js';

export type Clock = () => number;

export interface StoreOptions {
  /** Tests only: the crash suites' seam between statements (store/faults.ts). */
  faults?: StoreFaults;
  /**
   * Tests only: leases, the merge lease and the daemons registry go by the injected clock on PostgreSQL too (a suite
   * that moves time by hand). Without it they go by the database's clock there (ops/dbClock.ts).
   */
  handClock?: boolean;
}

/**
 * The engine with its transactions announced once committed: other daemons hear of the events at once
 * (a coalesced NOTIFY, outside the transaction), and the listeners get the events the transaction
 * appended (the daemon's event feed publishes them without reading them back).
 */
function announcing(raw: DBAdapter, engine: DBAdapter, handClock: boolean): { db: DBAdapter; onWrite: (listener: (events: readonly MaestroEvent[]) => void) => () => boolean } {
  const writeListeners = new Set<(events: readonly MaestroEvent[]) => void>();
  const db: DBAdapter = {
    ...raw,
    handClock,
    transaction: async (fn, label, options) => {
      const events: MaestroEvent[] = [];
      const result = await raw.transaction((q) => fn({ ...q, handClock, onEvent: (e) => events.push(e) }), label, options);
      // Committed (a rollback threw above).
      if (events.length) void engine.notifyEvents?.();
      for (const l of writeListeners) l(events);
      return result;
    },
  };
  const onWrite = (listener: (events: readonly MaestroEvent[]) => void) => {
    writeListeners.add(listener);
    return () => writeListeners.delete(listener);
  };
  return { db, onWrite };
}

export function createStore(engine: DBAdapter, clock: Clock = Date.now, options: StoreOptions = {}) {
  const { db, onWrite } = announcing(options.faults ? withFaults(engine, options.faults) : engine, engine, options.handClock ?? false);
  const tx = <T>(label: string, fn: (q: Queryable, now: number) => Promise<T>, options?: TransactionOptions) => db.transaction((q) => fn(q, clock()), label, options);

  const ops: TaskOpsContext = { db, tx, clock };
  const projects = projectRecords(ops);
  const tasks = { ...taskReads(ops), ...taskRecords(ops), ...taskClaims(ops), ...taskGates(ops) };

  const runs = {
    create: (opts: { taskId: string; kind: RunKind; model: string | null; traceId: string; attempt: number; id?: string; runDir?: string | null; owner?: string | null }) =>
      tx('runs.create', (q, now) => createRun(q, { ...opts, now })),
    /** Creates the run with its `run.started` event. */
    start: (opts: { taskId: string; kind: RunKind; model: string | null; traceId: string; attempt: number; id?: string; runDir?: string | null; owner?: string | null }) =>
      tx('runs.start', (q, now) => startRun(q, { ...opts, now })),
    /** The daemon gives up on a run: it fails, and its task goes back (ops/failRun.ts). */
    failWithTask: (opts: Omit<FailRunOptions, 'now'>) => tx('runs.failWithTask', (q, now) => failRunAndTask(q, { ...opts, now })),
    setWorker: (id: string, pid: number | null) => setRunWorker(db, id, pid),
    setOutboxProgress: (id: string, offset: number, seq: number) => setOutboxProgress(db, id, offset, seq),
    get: (id: string) => getRun(db, id),
    finish: (opts: { id: string; status: Exclude<RunStatus, 'running'>; inputTokens?: number; outputTokens?: number; costUsd?: number; error?: string | null; model?: string | null }) =>
      tx('runs.finish', (q, now) => finishRun(q, { ...opts, now })),
    list: (filter?: Parameters<typeof listRuns>[1]) => listRuns(db, filter),
    /** Keeps a finished run's ledger (null: it staged nothing) for a daemon that takes its task over; the first one stands. */
    storeKnowledge: (runId: string, ledger: string | null) => storeRunKnowledge(db, { runId, ledger, now: clock() }),
    /** The stored ledgers of these runs (ops/runKnowledge.ts). */
    knowledgeOf: (runIds: readonly string[]) => runKnowledgeOf(db, runIds),
  };

  const approvals = {
    list: (filter?: Parameters<typeof listApprovals>[1]) => listApprovals(db, filter),
  };

  const decisions = {
    record: (d: Omit<SchedulerDecision, 'id' | 'at' | 'takenOver'> & Partial<Pick<SchedulerDecision, 'takenOver'>>) => tx('decisions.record', (q, now) => recordDecision(q, { ...d, at: now })),
    list: (filter?: Parameters<typeof listDecisions>[1]) => listDecisions(db, filter),
  };

  const events = {
    append: (e: NewEvent) => tx('events.append', (q, now) => appendEvent(q, e, now)),
    appendOnce: (e: NewEvent, dedupeKey: string) => tx('events.appendOnce', (q, now) => appendEventOnce(q, e, dedupeKey, now)),
    list: (filter?: Parameters<typeof listEvents>[1]) => listEvents(db, filter),
    byIds: (ids: readonly number[]) => eventsByIds(db, ids),
    taskChangesAfter: (after: number, limit?: number) => taskChangesAfter(db, after, limit),
    lastId: () => lastEventId(db),
  };

  /** The daemons on this database (several on one PostgreSQL), as a task's detail names the one that holds it. */
  const daemons = {
    /** How long ago the daemon of that name was heard from, by the registry's clock (the database's on PostgreSQL). */
    lastHeard: (name: string) => daemonLastHeard(db, name, clock()),
    /** Those heard from in the last `withinMs` (a stop takes a daemon's row away; a kill -9 leaves it to go stale). */
    list: (withinMs: number) => listDaemons(db, { now: clock(), withinMs }),
    /** Those of these names, stale or not: host, home and settings, as a task's detail names them. */
    named: (names: readonly string[]) => daemonsNamed(db, names),
  };

  const metrics = {
    tasksByStatus: (projectId?: string) => tasksByStatus(db, projectId),
    runDurations: (projectId?: string) => runDurations(db, projectId),
    usageByProject: () => usageByProject(db),
  };

  return { db, clock, onWrite, projects, tasks, runs, approvals, decisions, events, daemons, metrics, close: () => db.close() };
}

export type Store = ReturnType<typeof createStore>;
