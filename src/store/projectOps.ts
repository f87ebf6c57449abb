/**
 * The Store's project repository: register, read, change settings, archive and restore. Each change
 * appends its event (who, from where) in the same transaction; a change of auto-approval also keeps where it
 * takes effect from (ops/autoApproval.ts).
 */
import type { AutoApprovalChange } from '../core/autoApproval.js';
import type { ProjectInput } from '../core/schemas.js';
import type { Project } from '../core/types.js';
import { autoApprovalChange, recordAutoApprovalFrom } from './ops/autoApproval.js';
import { appendEvent } from './ops/events.js';
import { archiveProject, createProject, getProject, listProjects, restoreProject, updateProjectConfig } from './ops/projects.js';
import type { TaskOpsContext } from './taskOps.js';

export function projectRecords({ db, tx }: TaskOpsContext) {
  return {
    /** Registers a project with its `project.created` event (`describe` gives the payload: who, from where, the settings). */
    create: (input: ProjectInput, describe?: (project: Project) => Record<string, unknown>) =>
      tx('projects.create', async (q, now) => {
        const project = await createProject(q, input, now);
        const change = await autoApprovalChange(q, project.id, {}, project.config);
        const event = await appendEvent(q, { projectId: project.id, type: 'project.created', payload: describe ? describe(project) : { name: project.name, repoPath: project.repoPath, keys: Object.keys(project.config) } }, now);
        if (change) await recordAutoApprovalFrom(q, project.id, change, event.id);
        return project;
      }),
    get: (idOrName: string) => getProject(db, idOrName),
    list: () => listProjects(db),
    /** Archives it with its `project.archived` event (`payload`: who, from where); refused while work is in flight or at a gate. */
    archive: (idOrName: string, payload: Record<string, unknown> = {}) =>
      tx('projects.archive', async (q, now) => {
        const before = await archiveProject(q, idOrName, now);
        await appendEvent(q, { projectId: before.id, type: 'project.archived', payload: { name: before.name, ...payload } }, now);
        return getProject(q, before.id);
      }),
    /** Brings it back with its `project.restored` event. */
    restore: (idOrName: string, payload: Record<string, unknown> = {}) =>
      tx('projects.restore', async (q, now) => {
        const before = await restoreProject(q, idOrName, now);
        await appendEvent(q, { projectId: before.id, type: 'project.restored', payload: { name: before.name, ...payload } }, now);
        return getProject(q, before.id);
      }),
    /**
     * Replaces the settings; the `project.config` event's payload describes the change (`describe` sees the settings
     * before it), and what a change of auto-approval means (`autoApproval`: the tasks waiting that it leaves to a person).
     * `expect` sees the project as it stands in the transaction and throws to save nothing (a change made from
     * settings that have changed since).
     */
    updateConfig: (idOrName: string, config: Record<string, unknown>, describe?: (before: Project) => Record<string, unknown>, expect?: (before: Project) => void) =>
      tx('projects.updateConfig', async (q, now): Promise<{ project: Project; autoApproval: AutoApprovalChange | null }> => {
        const before = await getProject(q, idOrName);
        expect?.(before);
        const project = await updateProjectConfig(q, before.id, config, now);
        const autoApproval = await autoApprovalChange(q, project.id, before.config, config);
        const payload = { ...(describe ? describe(before) : { keys: Object.keys(config) }), ...(autoApproval ? { autoApproval } : {}) };
        const event = await appendEvent(q, { projectId: project.id, type: 'project.config', payload }, now);
        if (autoApproval) await recordAutoApprovalFrom(q, project.id, autoApproval, event.id);
        return { project, autoApproval };
      }),
  };
}
