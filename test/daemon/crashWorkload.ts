/**
 * The crash-points workload: drives a few tasks through every kind of status
 * change the daemon makes, with the same store operations and transactions
 * (the scheduler's claim, fenced advances, run start, a run's final record,
 * giving up on a run, lease expiry, gates, rejection into a new version,
 * decomposition, cancel, retry, merge recording). No agents and no git: the
 * runs' outcomes are written as the ingestor would apply them.
 *
 * Resumable from any state: each step looks at what the database holds, so a
 * process killed between two statements can be followed by another that
 * finishes the work. The clock is derived from the database, so a jump past a
 * lease survives a restart.
 */
import type { Run, Task } from '../../src/core/types.js';
import { Scheduler } from '../../src/daemon/scheduler.js';
import { applyFinalRecord } from '../../src/daemon/outcomes.js';
import type { ErrorRecord, ResultRecord } from '../../src/executor/protocol/outbox.js';
import type { Store } from '../../src/store/store.js';

export const OWNER = 'crash-driver';
const LEASE_MS = 60_000;
const STEP_MS = 1_000;
const USAGE = { inputTokens: 1, outputTokens: 1, costUsd: 0, models: ['scripted'], agentCalls: 1 };

/** Titles and what is special about each. */
const TASKS: Record<string, string> = {
  plain: 'the whole way: claim, execute, review, exec_review, merge',
  planned: 'planned, approved into two subtasks, done when they are',
  flaky: 'the daemon gives up on its first run (ready with a backoff)',
  errored: 'its first run ends with an error record (ready with a backoff)',
  stale: 'its claimer stops heartbeating: the lease expires',
  rejected: 'rejected at exec_review: superseded by version 2',
  cancelled: 'cancelled while ready, then retried',
  refused: 'its run is refused (needs_attention), then retried',
  asks: 'asks a question (awaiting_input), then answered',
};

/** A clock that starts after everything the database has seen and moves only forwards. */
export async function workloadClock(store: Pick<Store, 'db'>): Promise<{ now: () => number; set: (t: number) => void; tick: () => void }> {
  const row = await store.db.one<{ t: number | null }>(`SELECT MAX(at) AS t FROM events`);
  let t = Math.max(1_700_000_000_000, Number(row?.t ?? 0)) + STEP_MS;
  return { now: () => t, set: (x) => (t = Math.max(t, x)), tick: () => (t += STEP_MS) };
}

async function hasEvent(store: Store, task: Task, match: (e: { type: string; payload: Record<string, unknown> }) => boolean): Promise<boolean> {
  const { events } = await store.events.list({ taskId: task.id, limit: 1000 });
  return events.some(match);
}

function final(run: Run, record: Pick<ResultRecord, 'data'> | Pick<ErrorRecord, 'code' | 'message'>): ResultRecord | ErrorRecord {
  const base = { seq: 1, traceId: run.traceId, runId: run.id, at: 0, usage: USAGE };
  if ('code' in record) return { ...base, type: 'error', code: record.code, message: record.message, stage: 'execute', retryable: true };
  return { ...base, type: 'result', kind: run.kind, data: record.data };
}

function resultFor(run: Run): Record<string, unknown> {
  switch (run.kind) {
    case 'plan':
      return { markdown: '# plan', subtasks: [{ title: 'child-a', complexity: 'easy' }, { title: 'child-b', complexity: 'easy', deps: [0] }] };
    case 'review':
      return { next: 'exec_review', verdict: 'approve' };
    default:
      return { branch: `maestro/${run.taskId}` };
  }
}

/** Returns true when it moved the clock past the task's lease (the pass ends there). */
async function runStep(store: Store, task: Task, clock: { set: (t: number) => void }): Promise<boolean> {
  const fence = { id: task.id, owner: OWNER, attempt: task.attempt };
  const kind = task.status === 'planning' ? 'plan' : task.status === 'reviewing' ? 'review' : 'execute';
  const [run] = await store.runs.list({ taskId: task.id, status: 'running' });
  if (!run) {
    await store.runs.start({ taskId: task.id, kind, model: null, traceId: `trace-${task.id}`, attempt: task.attempt, owner: OWNER });
    return false;
  }
  if (task.title === 'stale' && task.status === 'executing' && !(await hasEvent(store, task, (e) => e.payload.reason === 'lease expired'))) {
    clock.set(task.leaseExpiresAt! + 1); // its claimer went silent; the next pass expires the lease
    return true;
  } else if (task.title === 'asks' && task.status === 'executing' && !(await hasEvent(store, task, (e) => e.payload.to === 'awaiting_input'))) {
    await store.tasks.advance(fence, 'executing', 'awaiting_input');
  } else if (task.title === 'flaky' && task.status === 'executing' && !(await hasEvent(store, task, (e) => String(e.payload.error ?? '').startsWith('WORKER_SILENT')))) {
    await store.runs.failWithTask({ run, task, owner: OWNER, error: 'WORKER_SILENT: killed', backoffMs: () => STEP_MS });
  } else if (task.title === 'errored' && task.status === 'executing' && !(await hasEvent(store, task, (e) => e.type === 'run.finished' && e.payload.status === 'failed'))) {
    await store.db.transaction((q) => applyFinalRecord(q, run, final(run, { code: 'CHECK_FAILED', message: 'tests failed' }), { owner: OWNER, now: store.clock(), offset: 1 }), 'run.final');
  } else {
    await store.db.transaction((q) => applyFinalRecord(q, run, final(run, { data: resultFor(run) }), { owner: OWNER, now: store.clock(), offset: 1 }), 'run.final');
  }
  return false;
}

async function step(store: Store, task: Task, clock: { set: (t: number) => void }): Promise<boolean | void> {
  const fence = { id: task.id, owner: OWNER, attempt: task.attempt };
  switch (task.status) {
    case 'ready':
      if (task.title === 'cancelled' && !(await hasEvent(store, task, (e) => e.payload.to === 'cancelled'))) await store.tasks.transition(task.id, 'cancelled', { from: 'ready', reason: 'by the driver' });
      return;
    case 'cancelled':
    case 'needs_attention':
      await store.tasks.retry(task.id, task.status);
      return;
    case 'queued': {
      if (task.title === 'refused' && !(await hasEvent(store, task, (e) => e.type === 'run.refused'))) {
        await store.tasks.advance(fence, 'queued', 'needs_attention', { lastRunError: 'refused' }, [{ projectId: task.projectId, taskId: task.id, type: 'run.refused', payload: { kind: 'execute' } }]);
        return;
      }
      const plans = task.plan === null && task.complexity !== 'easy' && task.parentId === null;
      await store.tasks.advance(fence, 'queued', plans ? 'planning' : 'executing');
      return;
    }
    case 'planning':
    case 'executing':
    case 'reviewing':
      return runStep(store, task, clock);
    case 'awaiting_input':
      await store.tasks.transition(task.id, 'executing', { from: 'awaiting_input', reason: 'answered' });
      return;
    case 'plan_review':
      await store.tasks.approve(task.id, 'plan_review', 'driver');
      return;
    case 'exec_review':
      if (task.title === 'rejected' && task.version === 1) await store.tasks.reject(task.id, 'exec_review', 'driver', 'try again');
      else await store.tasks.approve(task.id, 'exec_review', 'driver');
      return;
    case 'merging':
      await store.tasks.recordMerge({ taskId: task.id, projectId: task.projectId, branch: `maestro/${task.id}`, sha: null, how: 'driver' });
      return;
    case 'waiting_children': {
      const children = await store.tasks.list({ parentId: task.id });
      if (children.every((c) => c.status === 'done' || c.status === 'superseded')) await store.tasks.transition(task.id, 'done', { from: 'waiting_children' });
      return;
    }
    case 'spec_review':
    case 'done':
    case 'superseded':
      return;
    default: {
      const never: never = task.status;
      throw new Error(`unknown status ${String(never)}`);
    }
  }
}

/** Runs the workload until every task is done (or superseded by its next version). */
export async function runWorkload(store: Store, clock: { tick: () => void; set: (t: number) => void }): Promise<void> {
  let project = (await store.projects.list()).find((p) => p.name === 'crashpoints');
  project ??= await store.projects.create({ name: 'crashpoints', repoPath: '/repos/crashpoints' });
  const have = new Set((await store.tasks.list({ projectId: project.id })).map((t) => t.title));
  for (const title of Object.keys(TASKS)) {
    if (!have.has(title)) await store.tasks.create({ projectId: project.id, title, complexity: title === 'planned' ? 'medium' : 'easy' });
  }
  // A rebuild every few passes: each one checks the incremental ranking against a full one.
  const scheduler = new Scheduler(store, { owner: OWNER, leaseMs: LEASE_MS, rebuildMs: 5 * STEP_MS });
  for (let pass = 0; pass < 200; pass++) {
    clock.tick();
    await store.tasks.expireClaims();
    await scheduler.claim(20, () => 20);
    const tasks = await store.tasks.list({ projectId: project.id });
    if (tasks.every((t) => t.status === 'done' || t.status === 'superseded')) {
      if (scheduler.work.drift) throw new Error(`the scheduler's incremental ranking drifted from a full rebuild on ${scheduler.work.drift} tasks`);
      return;
    }
    for (const t of tasks) {
      // A stale task of another attempt (expired meanwhile) is left to the next pass.
      const fresh = await store.tasks.get(t.id);
      if (fresh.claimedBy !== null && fresh.claimedBy !== OWNER) continue;
      if (await step(store, fresh, clock)) break;
    }
  }
  throw new Error('the crash-points workload did not finish in 200 passes');
}

/**
 * Every way a task's event log can disagree with its state: it must start with
 * `task.created`, each status event must start where the last one ended (from
 * ready), the last must end at the status the task is in, and every claim a
 * scheduler made must have its decision.
 */
export async function eventLogProblems(store: Store): Promise<string[]> {
  const problems: string[] = [];
  for (const task of await store.tasks.list({ limit: 10_000 })) {
    const { events } = await store.events.list({ taskId: task.id, limit: 1000 });
    const log = events.filter((e) => e.type === 'task.created' || e.type === 'task.status');
    const where = `${task.title} v${task.version} (${task.id}, ${task.status})`;
    if (log[0]?.type !== 'task.created') problems.push(`${where}: the log does not start with task.created but ${log[0]?.type ?? 'nothing'}`);
    let status = 'ready';
    for (const e of log.slice(1)) {
      if (e.type !== 'task.status') problems.push(`${where}: a second task.created (event ${e.id})`);
      else if (e.payload.from !== status) problems.push(`${where}: event ${e.id} goes ${String(e.payload.from)} → ${String(e.payload.to)}, but the task was ${status}`);
      status = String(e.payload.to ?? status);
    }
    if (status !== task.status) problems.push(`${where}: the log ends at ${status}`);
    const claims = log.filter((e) => e.payload.to === 'queued' && typeof e.payload.score === 'number').length;
    const decisions = (await store.decisions.list({ taskId: task.id, limit: 1000 })).length;
    if (claims !== decisions) problems.push(`${where}: ${claims} scheduler claims but ${decisions} decisions`);
  }
  return problems;
}
