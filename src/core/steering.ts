/**
 * Files a change may touch that steer later runs: hooks and checks in `.maestro/` (they run as code on
 * the daemon's host), and the project knowledge every later brief quotes (specs, team specs, knowhow,
 * linked workspaces). Knowledge written into a worktree skips the knowledge review, so the person at
 * the gate is told before approving (the task detail's `steeringFiles`, api/routes/review.ts), and the merge names the files
 * after (`project.settings_files`). Everywhere, a name that is not UTF-8 is shown as the diff shows it, git's quoting
 * (`".maestro/hooks/a\377.sh"`, git/gitNames.ts shownName): with U+FFFD, two hooks could read as one.
 */
export const STEERING_PATHS = ['.maestro', '.workflow/specs', '.workflow/collab/specs', '.workflow/knowhow', '.workflow/workspaces.json'];

/**
 * The folders above a steering path (`.workflow` above `.workflow/knowhow`). A change that makes one a symlink (or
 * a file, or a submodule) moves every steering path under it: `.workflow` linked to `docs/wf` made
 * `docs/wf/knowhow/*.md` the project's knowhow, and no steering path was in the change.
 */
export const STEERING_PARENTS = [...new Set(STEERING_PATHS.flatMap((p) => p.split('/').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('/'))))];

/** Pathspecs for a git diff or log that finds every steering change; keep the names it lists that `isSteering`. */
export const STEERING_PATHSPECS = [...STEERING_PATHS, ...STEERING_PARENTS];

/** Whether a changed path steers: a steering path, a file under one, or a folder above one replaced by the change. */
export function isSteering(file: string): boolean {
  return STEERING_PARENTS.includes(file) || STEERING_PATHS.some((p) => file === p || file.startsWith(`${p}/`));
}
