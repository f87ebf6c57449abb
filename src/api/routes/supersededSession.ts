/**
 * When a person makes a new version of a task (a rejection at a gate, a retry from the current main), the old
 * version's knowledge session says so (knowledge/lifecycle/session/taskVersion.ts): its candidates stay in the
 * review queue, marked as coming from that version and listed after the current ones. Written where the project's
 * runs work (repoFor, as the knowledge routes read it), after the store has made the version; a failure here never
 * undoes the decision: it is logged.
 */
import type { Task } from '../../core/types.js';
import { isMaestroError } from '../../core/errors.js';
import { resolveWorkflowRoot } from '../../knowledge/format/root.js';
import { sessionIdFor } from '../../knowledge/lifecycle/bridge.js';
import { markSessionSuperseded, type SupersededVersion } from '../../knowledge/lifecycle/session/taskVersion.js';
import type { ApiDeps } from '../deps.js';

export async function recordSupersededSession(deps: Pick<ApiDeps, 'store' | 'home' | 'repoFor' | 'logError'>, old: Task, next: Task, why: Pick<SupersededVersion, 'cause' | 'gate' | 'reason' | 'who'>): Promise<void> {
  try {
    const project = await deps.store.projects.get(old.projectId);
    const repo = deps.repoFor ? deps.repoFor(project) : project.repoPath;
    const root = resolveWorkflowRoot({ workflowRoot: repo, env: deps.home ? { MAESTRO_HOME: deps.home } : {} });
    markSessionSuperseded(root, sessionIdFor(old.id), {
      task_id: old.id,
      version: old.version,
      ...why,
      at: new Date(next.createdAt).toISOString(),
      superseded_by: { task_id: next.id, version: next.version, session_id: sessionIdFor(next.id) },
    });
  } catch (err) {
    // A project folder gone (moved, deleted) has no session to mark; anything else is said.
    if (!isMaestroError(err, 'BAD_INPUT')) deps.logError(err as Error);
  }
}
