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
 * The most a report.md may be: its frontmatter is what is read (up to 64 KiB), the rest is the agent's prose.
 * The agent writes the file (the executor moves .maestro/report.md into the run) and every review reads each
 * run's report whole on the daemon's event loop: 228 MB took 3.7 s to parse, besides the read. The readers
 * refuse a larger one (session/report.ts), and the move does not copy one.
 */
export const MAX_REPORT_BYTES = 1024 * 1024;

/** What became of the agent's report: moved into the run, none there, or refused (removed unread) and why. */
export type AgentReportMove = { moved: true } | { moved: false; refused?: string };

/**
 * Moves `<worktree>/.maestro/report.md` to `<runDir>/report.md`. Only a regular file in a real folder is
 * read: a report that is a link (or under a linked `.maestro`) would have the worker, which runs outside any
 * sandbox, copy whatever it points at (the daemon's token) into the run's report. The run then has no report;
 * a linked report.md is removed unread, as a report would have been. So is one larger than MAX_REPORT_BYTES
 * (from lstat, before any read): copied, it was a run's report every review refuses, and left, it would be
 * committed; the answer says why, for the run's record.
 */
export function moveAgentReport(worktree: string, runDir: string): AgentReportMove {
  const dir = join(worktree, dirname(AGENT_REPORT_PATH));
  const src = join(worktree, AGENT_REPORT_PATH);
  const folder = lstatSync(dir, { throwIfNoEntry: false });
  if (!folder?.isDirectory()) return { moved: false };
  const file = lstatSync(src, { throwIfNoEntry: false });
  if (!file) return { moved: false };
  if (!file.isFile()) {
    if (file.isSymbolicLink()) unlinkSync(src);
    return { moved: false };
  }
  if (file.size > MAX_REPORT_BYTES) {
    unlinkSync(src);
    removeIfEmpty(dir);
    return { moved: false, refused: `${AGENT_REPORT_PATH} is ${file.size} bytes, more than a report may be (${MAX_REPORT_BYTES}): it was removed unread, and the run has no report (its decisions and constraints are not proposed). Keep the report to its frontmatter and a short summary.` };
  }
  mkdirSync(runDir, { recursive: true });
  copyFileSync(src, join(runDir, 'report.md'));
  unlinkSync(src);
  removeIfEmpty(dir);
  return { moved: true };
}

function removeIfEmpty(dir: string): void {
  if (readdirSync(dir).length === 0) rmSync(dir, { recursive: true, force: true });
}
