/**
 * Files a change may touch that steer later runs: hooks and checks in `.maestro/` (they run as code on
 * the daemon's host), and the project knowledge every later brief quotes (specs, team specs, knowhow,
 * linked workspaces). Knowledge written into a worktree skips the knowledge review, so the person at
 * the gate is told before approving (the task detail's `steeringFiles`, api/routes/review.ts), and the merge names the files
 * after (`project.settings_files`).
 */
export const STEERING_PATHS = ['.maestro', '.workflow/specs', '.workflow/collab/specs', '.workflow/knowhow', '.workflow/workspaces.json'];

