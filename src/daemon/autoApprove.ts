/**
 * Projects with `autoApproveAfterMs` (the demo) approve their gates
 * themselves unless a person acts first, for the tasks that reach a gate
 * once the setting took effect (the ones waiting then wait for a person:
 * core/autoApproval.ts); with `autoReplyAfterMs` and `autoReply` they also
 * answer an agent's question. One pass per tick.
 */
import { MaestroError, coerceError } from '../core/errors.js';
import { AUTO_APPROVER } from '../core/schemas.js';
import type { Gate, Project, Task } from '../core/types.js';
import type { Store } from '../store/store.js';

export interface AutoApproveOptions {
  /** Answers a waiting question (the orchestrator's reply path). */
  reply?: (task: Task, answer: string, who: string) => Promise<unknown>;
  onChange: () => void;
  onError: (err: Error) => void;
}

/**
 * `projects`: the tick's list of them. A task waiting at a gate for a person waits there for many ticks, and reading
 * its project for each (every task event, on every daemon) grew with the work waiting, not with the work done.
 * `inFlight`: the tick's in-flight tasks, the questions among them (read a moment ago; a question asked since is
 * answered on the next tick, which its event brings). Nothing is read for a setting no project has.
 */
export async function autoApprove(store: Store, opts: AutoApproveOptions, projects: readonly Project[], inFlight: readonly Task[]): Promise<void> {
  const now = store.clock();
  const listed = new Map(projects.map((p) => [p.id, p]));
  const projectOf = async (task: Task) => listed.get(task.projectId) ?? (await store.projects.get(task.projectId));
  const waiting = projects.some((p) => typeof p.config.autoReplyAfterMs === 'number') ? inFlight.filter((t) => t.status === 'awaiting_input') : [];
  for (const task of waiting) {
    const project = await projectOf(task);
    const after = project.config.autoReplyAfterMs;
    const answer = project.config.autoReply;
    if (typeof after !== 'number' || typeof answer !== 'string' || now - task.updatedAt < after || !opts.reply) continue;
    try {
      await opts.reply(task, answer, 'auto-reply');
    } catch (err) {
      if (!(err instanceof MaestroError)) opts.onError(coerceError(err));
    }
  }
  // Only the tasks that reached their gate after the project's auto-approval took effect (core/autoApproval.ts).
  const gated = projects.some((p) => typeof p.config.autoApproveAfterMs === 'number') ? await store.tasks.autoApprovable() : [];
  for (const { task, afterMs } of gated) {
    if (now - task.updatedAt < afterMs) continue;
    try {
      await store.tasks.approve(task.id, task.status as Gate, AUTO_APPROVER, `approved without a person: the project's autoApproveAfterMs (${afterMs} ms) passed`);
      opts.onChange();
    } catch (err) {
      if (!(err instanceof MaestroError)) opts.onError(coerceError(err));
    }
  }
}
