/**
 * git's auto-maintenance at Maestro's pace. Maestro's commits, merges and fetches turn git's own off
 * (`-c maintenance.auto=false`): it is a process after each of them, two to three per task. Without this, a
 * project where the person never commits, and a clone that only Maestro fetches into, would gather loose
 * objects for good. `--auto` does nothing until git's thresholds are passed, and gc goes to the background.
 */
import { git } from './git.js';

/** How often a repository gets `git maintenance run --auto` at most. */
export const MAINTENANCE_EVERY_MS = 10 * 60_000;

/** git's config for a command that must not run auto-maintenance itself (put before the command). */
export const NO_AUTO_MAINTENANCE = ['-c', 'maintenance.auto=false'];

const maintainedAt = new Map<string, number>();

/** Runs git's auto-maintenance in `repo` unless it ran there (in this process) within MAINTENANCE_EVERY_MS. */
export async function maintainAtPace(repo: string): Promise<void> {
  const last = maintainedAt.get(repo);
  if (last !== undefined && Date.now() - last < MAINTENANCE_EVERY_MS) return;
  maintainedAt.set(repo, Date.now());
  await git(repo, ['maintenance', 'run', '--auto', '--quiet']);
}
