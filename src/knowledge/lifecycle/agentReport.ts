/**
 * Where an agent's report goes. The agent works in the worktree, and
 * everything there is committed and merged, so it writes its report to
 * `.maestro/report.md` and the executor moves the file into the run directory
 * (`<runDir>/report.md`, the knowledge run's report) before committing. Kept
 * dependency-free: the executor imports it.
 */
import { copyFileSync, lstatSync, mkdirSync, readdirSync, rmSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';

export const AGENT_REPORT_PATH = '.maestro/report.md';

/**
 * Moves `<worktree>/.maestro/report.md` to `<runDir>/report.md`; true when there was one. Only a regular
 * file in a real folder is read: a report that is a link (or under a linked `.maestro`) would have the
 * worker, which runs outside any sandbox, copy whatever it points at (the daemon's token) into the run's
 * report. The run then has no report; a linked report.md is removed unread, as a report would have been.
 */
export function moveAgentReport(worktree: string, runDir: string): boolean {
  const dir = join(worktree, dirname(AGENT_REPORT_PATH));
  const src = join(worktree, AGENT_REPORT_PATH);
  const folder = lstatSync(dir, { throwIfNoEntry: false });
  if (!folder?.isDirectory()) return false;
  const file = lstatSync(src, { throwIfNoEntry: false });
  if (!file) return false;
  if (!file.isFile()) {
    if (file.isSymbolicLink()) unlinkSync(src);
    return false;
  }
  mkdirSync(runDir, { recursive: true });
  copyFileSync(src, join(runDir, 'report.md'));
  unlinkSync(src);
  if (readdirSync(dir).length === 0) rmSync(dir, { recursive: true, force: true });
  return true;
}
