/**
 * A project's own checkout (its repoPath; a project on a shared remote is worked in this daemon's clone instead)
 * moved or deleted while Maestro holds work for it. Every git command there failed with "does not exist": an
 * approved task stayed in `merging` for good, its merge tried (and its stack logged) at every tick, and nothing
 * said which project. Now the merge coordinator sends its approved tasks to the person (put the folder back, then
 * `task retry`), and the health report names the project while its folder is missing (PROJECT_FOLDER_MISSING),
 * looked at on each tick: a stat or two per project.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Project } from '../core/types.js';
import { remoteOf } from './repos.js';

/** A project whose folder is missing: where it was, and what that means. */
export interface MissingFolder {
  projectId: string;
  path: string;
  message: string;
}

/** What is wrong with the project's own checkout, when it is gone or no git repository any more; null when it is there (or the project has none: a shared remote). */
export function checkoutGone(project: Project): string | null {
  if (remoteOf(project)) return null;
  const { repoPath, name } = project;
  if (!existsSync(repoPath)) return `the folder ${repoPath} of project ${name} is gone (moved or deleted)`;
  if (!existsSync(join(repoPath, '.git'))) return `the folder ${repoPath} of project ${name} is no git repository any more (its .git is gone)`;
  return null;
}

/** The active projects (archived ones take no work) whose checkout is gone, as the health report says them. */
export function missingFolders(projects: readonly Project[]): MissingFolder[] {
  const missing: MissingFolder[] = [];
  for (const project of projects) {
    const gone = project.archivedAt === null ? checkoutGone(project) : null;
    if (gone) {
      missing.push({
        projectId: project.id,
        path: project.repoPath,
        message: `${gone[0]!.toUpperCase()}${gone.slice(1)}: its approved work cannot merge and its tasks cannot run there. Put it back (then \`maestro task retry\` what waits in needs_attention), or archive the project.`,
      });
    }
  }
  return missing;
}
