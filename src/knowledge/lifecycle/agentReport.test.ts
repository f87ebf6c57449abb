/**
 * The move of the agent's report into the run: a report larger than MAX_REPORT_BYTES (which every reader refuses)
 * is removed unread, found from lstat, and the answer says why; one of exactly the cap is moved. Real folders.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from '../../../test/helpers/db.js';
import { poll } from '../../../test/helpers/wait.js';
import { AGENT_REPORT_PATH, MAX_REPORT_BYTES, moveAgentReport } from './agentReport.js';

afterEach(() => removeTempDirs());

function worktreeWithReport(bytes: number): { worktree: string; runDir: string; report: string } {
  const worktree = tempDir('maestro-wt-');
  const runDir = tempDir('maestro-run-');
  mkdirSync(join(worktree, '.maestro'));
  const report = join(worktree, AGENT_REPORT_PATH);
  writeFileSync(report, '---\ndecisions: []\n---\n');
  truncateSync(report, bytes); // sparse past the frontmatter: a large file made at once
  return { worktree, runDir, report };
}

describe('moveAgentReport', () => {
  it('removes a report over MAX_REPORT_BYTES unread and says so; the run gets no report', () => {
    const { worktree, runDir, report } = worktreeWithReport(300 * 1024 * 1024);
    const move = moveAgentReport(worktree, runDir);
    expect(move).toEqual({ moved: false, refused: expect.stringContaining(`${AGENT_REPORT_PATH} is ${300 * 1024 * 1024} bytes, more than a report may be (${MAX_REPORT_BYTES})`) });
    expect(existsSync(join(runDir, 'report.md'))).toBe(false);
    expect(existsSync(report)).toBe(false);
    expect(existsSync(join(worktree, '.maestro'))).toBe(false);
  });

  it('moves a report of exactly MAX_REPORT_BYTES', () => {
    const { worktree, runDir, report } = worktreeWithReport(MAX_REPORT_BYTES);
    expect(moveAgentReport(worktree, runDir)).toEqual({ moved: true });
    expect(readFileSync(join(runDir, 'report.md')).length).toBe(MAX_REPORT_BYTES);
    expect(existsSync(report)).toBe(false);
  });

  it('answers none when there is no report', () => {
    expect(moveAgentReport(tempDir('maestro-wt-'), tempDir('maestro-run-'))).toEqual({ moved: false });
  });

  it('never copies what report.md is swapped to after it was looked at: a link to a secret is not followed', async () => {
    const worktree = tempDir('maestro-wt-');
    const secret = join(tempDir('maestro-secret-'), 'token');
    writeFileSync(secret, 'the daemon token');
    const dir = join(worktree, '.maestro');
    mkdirSync(dir);
    // What an agent's leftover process can do: swap report.md between a plain report and a link to the secret, each
    // swap one rename (atomic), as fast as it can, while the worker moves the report again and again.
    const swapper = spawn(process.execPath, ['-e', `
      const fs = require('node:fs'), p = require('node:path');
      const dir = ${JSON.stringify(dir)}, report = p.join(dir, 'report.md');
      for (let i = 0; ; i++) {
        try {
          fs.mkdirSync(dir, { recursive: true });
          const t = p.join(dir, 'swap-' + i);
          if (i % 2) fs.symlinkSync(${JSON.stringify(secret)}, t); else fs.writeFileSync(t, 'plain report');
          fs.renameSync(t, report);
        } catch {}
      }`], { stdio: 'ignore' });
    try {
      // A loaded machine starts the swapper late, and may let it run seldom: the moves begin once it swaps, and go
      // on past 3000 until one report was moved (an empty set would pass whatever the move copies).
      await poll(() => existsSync(join(dir, 'report.md')), 'the swapper to put report.md in place');
      const copied = new Set<string>();
      const deadline = Date.now() + 90_000;
      for (let i = 0; (i < 3000 || copied.size === 0) && Date.now() < deadline; i++) {
        const runDir = tempDir('maestro-run-');
        try {
          if (moveAgentReport(worktree, runDir).moved) copied.add(readFileSync(join(runDir, 'report.md'), 'utf8'));
        } catch (err) {
          // The folder or file gone in between, or filled again while the move removed it empty: the swapper's doing.
          if (!['ENOENT', 'ENOTEMPTY'].includes((err as NodeJS.ErrnoException).code ?? '')) throw err;
        }
      }
      expect([...copied]).toEqual(['plain report']);
    } finally {
      swapper.kill('SIGKILL');
    }
  }, 120_000);
});
