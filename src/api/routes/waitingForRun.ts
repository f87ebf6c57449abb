/**
 * A claimed task in flight with no run going waits for its daemon to start its next stage. When that daemon has every
 * run slot taken (maxConcurrentRuns, read from its registration on the database, or this daemon's own), the stage
 * starts when one of those runs ends: a task taken over at review by a busy daemon waits there (daemon/orchestrator.ts),
 * and before this nothing said why a task stood at reviewing with no review.
 */
import { IN_FLIGHT_STATUSES } from '../../core/status.js';
import type { Run, Task } from '../../core/types.js';
import type { Store } from '../../store/store.js';
import type { ApiDeps } from '../deps.js';
import type { TaskDetail } from '../wire/responses.js';

export async function waitingForRun(store: Store, self: ApiDeps['self'], task: Task, runs: readonly Run[]): Promise<TaskDetail['waitingForRun']> {
  const holder = task.claimedBy;
  if (!holder || !IN_FLIGHT_STATUSES.includes(task.status) || task.status === 'awaiting_input' || task.status === 'merging') return null;
  if (runs.some((r) => r.status === 'running')) return null;
  const settings = holder === self?.name ? self.settings : (await store.daemons.named([holder])).get(holder)?.settings;
  if (!settings) return null;
  const running = await store.runs.list({ status: 'running', owner: holder, limit: 1000 });
  if (running.length < settings.maxConcurrentRuns) return null;
  return { daemon: holder, limit: settings.maxConcurrentRuns, running: running.map((r) => ({ taskId: r.taskId, kind: r.kind })) };
}
