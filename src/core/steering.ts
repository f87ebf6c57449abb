/**
 * Files a change may touch that steer later runs: hooks and checks in `.maestro/` (they run as code on
 * the daemon's host), and the project knowledge every later brief quotes (specs, team specs, knowhow,
 * linked workspaces). Knowledge written into a worktree skips the knowledge review, so the person at
 * the gate is told before approving (the task detail's `steeringFiles`, api/routes/review.ts), and the merge names the files
 * after (`project.settings_files`). Everywhere, a name that is not UTF-8 is shown as the diff shows it, git's quoting
 * (`".maestro/hooks/a\377.sh"`, git/gitNames.ts shownName): with U+FFFD, two hooks could read as one.
 */
import { watchedPaths } from './watchedPaths.js';

export const STEERING_PATHS = ['.maestro', '.workflow/specs', '.workflow/collab/specs', '.workflow/knowhow', '.workflow/config.json', '.workflow/workspaces.json'];

/**
 * With the folders above them, as a git diff or log asks for them (`pathspecs`) and keeps what it lists (`holds`):
 * a change that replaces one of those folders moves every steering path under it (watchedPaths.ts). Through the
 * links of a commit's tree too: git/steering.ts.
 */
export const STEERING = watchedPaths(STEERING_PATHS);
