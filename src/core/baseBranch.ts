/**
 * The branch a project's tasks start from and merge back into: its config's `baseBranch`, else `main`. One rule
 * for the daemon (worktrees, merges), the API and the board, which names it where it says what merges where.
 */
import type { Project } from './types.js';

export const DEFAULT_BASE_BRANCH = 'main';

export function baseBranchOf(project: Pick<Project, 'config'>): string {
  return typeof project.config.baseBranch === 'string' ? project.config.baseBranch : DEFAULT_BASE_BRANCH;
}
