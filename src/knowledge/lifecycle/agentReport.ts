/**
 * Where an agent's report goes. The agent works in the worktree, and
 * everything there is committed and merged, so it writes its report to
 * `.maestro/report.md` and the executor moves the file into the run directory
 * (`<runDir>/report.md`, the knowledge run's report) before committing. Kept
 * dependency-free: the executor imports it.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';

export const AGENT_REPORT_PATH = '.maestro/report.md';

/** Moves `<worktree>/.maestro/report.md` to `<runDir>/report.md`; true when there was one. */
export function moveAgentReport(worktree: string, runDir: string): boolean {
  const src = join(worktree, AGENT_REPORT_PATH);
  if (!existsSync(src)) return false;
  mkdirSync(runDir, { recursive: true });
  copyFileSync(src, join(runDir, 'report.md'));
  unlinkSync(src);
  const dir = dirname(src);
  if (readdirSync(dir).length === 0) rmSync(dir, { recursive: true, force: true });
  return true;
}
