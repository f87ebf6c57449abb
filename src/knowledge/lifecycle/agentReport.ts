/**
 * Where an agent's report goes. The agent works in the worktree, and
 * everything there is committed and merged, so it writes its report to
 * `.maestro/report.md` and the executor moves the file into the run directory
 * (`<runDir>/report.md`, the knowledge run's report) before committing. Kept
 * free of the knowledge modules (lib/ only): the executor imports it.
 */
import { closeSync, fstatSync, lstatSync, mkdirSync, readdirSync, readSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { NotRegularFile, openRegular } from '../../lib/regularFile.js';

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
 * (from fstat, before any read): copied, it was a run's report every review refuses, and left, it would be
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
  // What is read is the file opened here, never a link (O_NOFOLLOW) and never anything but a regular file (fstat):
  // the agent (or what it left running) can swap report.md for a link between the lstat above and a copy by path.
  const content = readReport(src);
  if (content === 'link') {
    unlinkSync(src);
    return { moved: false };
  }
  if (content === 'not a file') return { moved: false };
  if (typeof content === 'number') {
    unlinkSync(src);
    removeIfEmpty(dir);
    return { moved: false, refused: `${AGENT_REPORT_PATH} is ${content} bytes, more than a report may be (${MAX_REPORT_BYTES}): it was removed unread, and the run has no report (its decisions and constraints are not proposed). Keep the report to its frontmatter and a short summary.` };
  }
  mkdirSync(runDir, { recursive: true });
  writeFileSync(join(runDir, 'report.md'), content);
  unlinkSync(src);
  removeIfEmpty(dir);
  return { moved: true };
}

/**
 * The report's bytes, read from one descriptor: 'link' when it is a link now, 'not a file' for anything else that
 * is not a regular file (a FIFO is opened without waiting, and not read), its size when larger than MAX_REPORT_BYTES.
 */
function readReport(src: string): Buffer | number | 'link' | 'not a file' {
  let fd: number;
  try {
    fd = openRegular(src, { noFollow: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') return 'link';
    if (code === 'ENOENT' || err instanceof NotRegularFile) return 'not a file';
    throw err;
  }
  try {
    const { size } = fstatSync(fd);
    if (size > MAX_REPORT_BYTES) return size;
    // One byte more than the cap: a file that grew since fstat is refused, not cut.
    const buffer = Buffer.alloc(MAX_REPORT_BYTES + 1);
    let length = 0;
    let n: number;
    do {
      n = readSync(fd, buffer, length, buffer.length - length, null);
      length += n;
    } while (n > 0 && length < buffer.length);
    return length > MAX_REPORT_BYTES ? length : buffer.subarray(0, length);
  } finally {
    closeSync(fd);
  }
}

function removeIfEmpty(dir: string): void {
  if (readdirSync(dir).length === 0) rmSync(dir, { recursive: true, force: true });
}
