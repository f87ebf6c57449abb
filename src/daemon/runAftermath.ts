/**
 * What the orchestrator does around a run besides running it: the knowledge
 * bridge's steps (which must never fail a run), publishing the task branch on
 * a shared remote before a run's outcome is committed, and removing the
 * worktrees of finished tasks and the agents' scratch folders of runs that ended.
 */
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { coerceError, isMaestroError } from '../core/errors.js';
import { FINISHED_STATUSES } from '../core/status.js';
import type { Run, Task } from '../core/types.js';
import { scratchFoldersIn } from '../executor/agentRunFolder.js';
import { branchName } from '../executor/protocol/job.js';
import { pruneOrphanWorktrees, worktreeRoot } from '../git/worktree.js';
import type { KnowledgeBridge } from '../knowledge/lifecycle/bridge.js';
import type { Store } from '../store/store.js';
import { importKnowledgeElsewhere, PROPOSING } from './knowledgeImport.js';
import { takesResult } from './outcomes.js';
import { remoteOf, workRepoOf, type ProjectRepos } from './repos.js';

/** Knowledge must never fail a run: an error becomes a `knowledge.error` event (and one that cannot be recorded goes to `onError`). */
export async function tryKnowledge<T>(store: Store, task: Task, step: string, fn: () => T | Promise<T>, onError: (err: Error) => void): Promise<T | null> {
  try {
    return await fn();
  } catch (e) {
    await store.events.append({ projectId: task.projectId, taskId: task.id, type: 'knowledge.error', payload: { step, message: (e as Error).message } }).catch((err) => onError(coerceError(err)));
    return null;
  }
}

/** Finishes the run's knowledge where the run started it: the repository it ran from (workRepoOf: on a shared remote, this daemon's clone). */
export async function knowledgeFinished(store: Store, knowledge: KnowledgeBridge, home: string, run: Run, onError: (err: Error) => void): Promise<void> {
  // A task or project deleted meanwhile has no knowledge to finish; any other failure is said, not dropped.
  const gone = (err: unknown) => {
    if (!isMaestroError(err, 'UNKNOWN_TASK') && !isMaestroError(err, 'UNKNOWN_PROJECT')) onError(coerceError(err));
    return null;
  };
  const task = await store.tasks.row(run.taskId).catch(gone);
  const project = task && (await store.projects.get(task.projectId).catch(gone));
  if (!task || !project || !run.runDir) return;
  // The offline demo promotes a run's accepted decisions by itself, as it approves its gates (bridge.ts).
  const autoPromoteDecisions = project.config.demo === true;
  const info = { task, run: { id: run.id, kind: run.kind }, runDir: run.runDir!, repoPath: workRepoOf(home, project) };
  // Scored first in slices (off the synchronous finish): a run's 1,000 candidates held the event loop for seconds.
  await knowledge.scoreRunAhead(info);
  const done = await tryKnowledge(store, task, 'run-finished', () => knowledge.onRunFinished(info, { autoPromoteDecisions }), onError);
  if (done?.promoted.length) await store.events.append({ projectId: task.projectId, taskId: task.id, runId: run.id, type: 'knowledge.promoted', payload: { promoted: done.promoted, automatic: true } }).catch((err) => onError(coerceError(err)));
  // What it proposed travels with it in the database: a daemon that takes the task over imports it at the gate.
  if (done && PROPOSING.includes(run.kind)) {
    const ledger = await tryKnowledge(store, task, 'run-stored', () => ({ text: knowledge.sealedLedger(info) }), onError);
    if (ledger) await store.runs.storeKnowledge(run.id, ledger.text).catch((err) => onError(coerceError(err)));
  }
  // The run took the task to its gate (a review, on a task taken over): its other daemons' runs' candidates come here.
  const now = await store.tasks.row(run.taskId).catch(gone);
  if (now?.status === 'exec_review' && run.owner !== null) {
    const left = await store.runs
      .list({ taskId: now.id })
      .then((runs) => importKnowledgeElsewhere(store, knowledge, home, run.owner!, now, runs))
      .catch((err) => (onError(coerceError(err)), []));
    for (const l of left.filter((x) => x.error !== null)) await store.events.append({ projectId: now.projectId, taskId: now.id, runId: l.run.id, type: 'knowledge.error', payload: { step: 'import', message: l.error } }).catch((err) => onError(coerceError(err)));
  }
}

/**
 * At the end of a run on a shared remote, before its outcome is committed: publish the task branch, so any daemon
 * that acts on the outcome (reviews it, merges it after a conflict run) finds the commit the outcome names. A push
 * that fails is said (git.push_failed) and the outcome is committed anyway: a review pushes again before it starts.
 * The branch replaces one the remote has apart from it only while the run's outcome would still count (outcomes.ts).
 */
export async function publishTaskBranch(store: Store, repos: ProjectRepos, home: string, run: Run, onError: (err: Error) => void): Promise<void> {
  try {
    const task = await store.tasks.row(run.taskId);
    const project = await store.projects.get(task.projectId);
    if (!remoteOf(project) || run.kind === 'plan') return;
    await repos.pushBranch(project, workRepoOf(home, project), branchName(task.id, task.version), () => runStillCounts(store, run));
  } catch (err) {
    const e = coerceError(err);
    await store.events.append({ taskId: run.taskId, runId: run.id, traceId: run.traceId, type: 'git.push_failed', payload: { message: e.message } }).catch(() => undefined);
    onError(e);
  }
}

/**
 * Whether a run's outcome would still be taken, as applyFinalRecord decides it: the run was not ended meanwhile
 * (a lease that expires ends its runs), and takesResult.
 */
export async function runStillCounts(store: Store, run: Run): Promise<boolean> {
  const [now, task] = await Promise.all([store.runs.get(run.id), store.tasks.row(run.taskId)]);
  return now.status === 'running' && run.owner !== null && takesResult(task, run, run.owner);
}

/** Whether `owner` still holds the task by the claim of `attempt` (a branch it pushes may replace the remote's: ProjectRepos.pushBranch). */
export async function holdsClaim(store: Store, claim: { id: string; owner: string; attempt: number }): Promise<boolean> {
  const task = await store.tasks.row(claim.id);
  return task.claimedBy === claim.owner && task.attempt === claim.attempt;
}

/**
 * Removes the worktrees of tasks that are finished (done, cancelled, superseded) or unknown, and of versions a
 * task has left. Only the tasks of the worktrees found are read, after they are listed (pruneOrphanWorktrees):
 * listing every task first cost as much as the project's history, and cut at 100,000 tasks (the oldest, so the
 * newest work's worktrees would have gone); a task started between that list and the removal lost its worktree.
 */
export async function pruneFinishedWorktrees(store: Store, home: string, opts: { onError: (err: Error) => void; log?: { info(obj: Record<string, unknown>, msg: string): void } }): Promise<void> {
  try {
    for (const project of await store.projects.list()) {
      const repo = workRepoOf(home, project);
      if (!existsSync(repo)) continue;
      const removed = await pruneOrphanWorktrees(repo, worktreeRoot(home, project.id), (names) => worktreesInUse(store, names));
      if (removed.length) opts.log?.info({ projectId: project.id, removed }, 'removed orphaned worktrees');
    }
  } catch (err) {
    opts.onError(coerceError(err));
  }
}

/** Which of these worktree names (`<taskId>-v<version>`, `<taskId>-plan`) belong to a task's current, unfinished work. */
async function worktreesInUse(store: Store, names: readonly string[]): Promise<string[]> {
  const parsed = names.map((name) => ({ name, m: /^(.+)-(?:v(\d+)|plan)$/.exec(name) }));
  const tasks = new Map((await store.tasks.byIds(parsed.flatMap(({ m }) => (m ? [m[1]!] : [])))).map((t) => [t.id, t]));
  return parsed.flatMap(({ name, m }) => {
    const task = m ? tasks.get(m[1]!) : undefined;
    if (!task || FINISHED_STATUSES.includes(task.status)) return [];
    return m![2] === undefined || Number(m![2]) === task.version ? [name] : [];
  });
}

/**
 * Removes the agents' scratch folders (agentRunFolder.ts) of this home's runs that are no longer running: a worker
 * that died on its own mid-call, or a run another daemon ended while this one was away, left them (a killed
 * worker's go at once: WorkerManager.kill). The folders are found before the running runs are read: a run
 * recorded running before its worker makes its folder, so one found here either shows in that read or has ended.
 */
export async function pruneEndedScratch(store: Store, home: string, opts: { onError: (err: Error) => void; log?: { info(obj: Record<string, unknown>, msg: string): void } }): Promise<void> {
  try {
    const found = await scratchFoldersIn(join(home, 'runs'));
    if (!found.size) return;
    const running = new Set((await store.runs.list({ status: 'running', limit: 100_000 })).map((r) => r.id));
    const removed = [...found].filter(([runId]) => !running.has(runId));
    for (const [, folder] of removed) rmSync(folder, { recursive: true, force: true, maxRetries: 3 });
    if (removed.length) opts.log?.info({ runs: removed.map(([runId]) => runId) }, 'removed the scratch folders of ended runs');
  } catch (err) {
    opts.onError(coerceError(err));
  }
}
