/**
 * Executor pipeline: worktree (main merged in first), reflect when the last two
 * tries failed, the agent, a commit, then each configured check as its own
 * gate, then the diff gate (files outside ownedFiles, size limits).
 */
import { join } from 'node:path';
import { EDIT_TOOLS } from '../../agents/types.js';
import { MaestroError } from '../../core/errors.js';
import { diffStats, type DiffStats } from '../../git/diff.js';
import { moveAgentReport } from '../../knowledge/lifecycle/agentReport.js';
import { git } from '../../git/git.js';
import { runCheck, type CheckOutcome } from '../checks.js';
import { callAgent, needsAttention, runSandbox, stage, type RunContext } from '../context.js';
import type { Divergence } from '../../git/divergence.js';
import { executorPrompt, reflectPrompt } from './prompts.js';
import { commitWork, conflictNeeded, worktreeStage } from './worktreeStage.js';

export interface ExecuteResult {
  branch: string;
  worktreePath: string;
  baseBranch: string;
  /** The base commit the worktree started from. */
  baseSha: string;
  commitSha: string;
  divergence: Divergence;
  diff: DiffStats;
  checks: Array<Omit<CheckOutcome, 'tail'>>;
  reflection: string | null;
  /** The end of the agent's answer, for the task detail. */
  summary: string;
}

/**
 * The most of a reflection kept: its end, where the analysis concludes. It goes into the next prompt and is kept on
 * the task (the execute result, read with every task), as the agent's summary is (its last 2,000 characters); it was
 * kept whatever its length.
 */
export const MAX_REFLECTION_CHARS = 10_000;

/** After two consecutive failures, analyse them before trying again; shared by executor and conflict. */
export async function reflectStage(ctx: RunContext, cwd: string): Promise<string | null> {
  if (ctx.job.previousFailures.length < 2) return null;
  const text = await stage(ctx, 'reflect', () => callAgent(ctx, {
    stage: 'reflect', role: 'reflect', prompt: reflectPrompt(ctx.job), cwd, tier: ctx.job.model.tier, allowedTools: ['Read', 'Grep', 'Glob'], permissionMode: 'plan',
  }));
  return text.slice(-MAX_REFLECTION_CHARS);
}

/**
 * How many of the files outside ownedFiles a refusal names in its details (and so in its run.phase event, which
 * the task detail reads): a change that reformats a whole repository lists thousands, and a person needs the
 * first ones and the count. `task diff --stat` lists them all.
 */
const OUTSIDE_OWNED_NAMED = 100;

export async function runChecksAndGate(ctx: RunContext, worktree: string, base: string): Promise<{ checks: CheckOutcome[]; diff: DiffStats }> {
  const outcomes = await runChecks(ctx, worktree);
  const diff = await diffGate(ctx, worktree, base);
  return { checks: outcomes, diff };
}

/** Each configured check as its own stage, in order; the first that fails throws CHECK_FAILED naming it and its log. */
export async function runChecks(ctx: RunContext, worktree: string): Promise<CheckOutcome[]> {
  const { limits, checks } = ctx;
  const outcomes: CheckOutcome[] = [];
  for (const check of checks) {
    const outcome = await stage(ctx, `check:${check.name}`, async () => {
      const result = await runCheck(check, worktree, join(ctx.runDir, 'checks'), limits.checkTimeoutMs, ctx.signal, runSandbox(ctx));
      if (ctx.signal.aborted) throw new MaestroError('INTERRUPTED', `stopped during check ${check.name}`);
      if (!result.ok) {
        throw new MaestroError('CHECK_FAILED', `check ${check.name} ${result.timedOut ? `timed out after ${check.timeoutMs ?? limits.checkTimeoutMs} ms` : `failed (exit ${result.exitCode})`}; log: ${result.logPath}`, {
          details: { check: check.name, exitCode: result.exitCode, timedOut: result.timedOut, logPath: result.logPath, log: result.tail },
        });
      }
      return result;
    });
    outcomes.push(outcome);
  }
  return outcomes;
}

/** The diff gate: files outside ownedFiles, size limits, stray gitlinks, large files. */
function diffGate(ctx: RunContext, worktree: string, base: string): Promise<DiffStats> {
  const { job, limits } = ctx;
  return stage(ctx, 'diff-gate', async () => {
    const stats = await diffStats(worktree, base, 'HEAD', job.task.ownedFiles, limits.maxFileBytes);
    const lines = stats.linesAdded + stats.linesDeleted;
    const problems: string[] = [];
    if (stats.outsideOwned.length) problems.push(`${stats.outsideOwned.length} file(s) outside ownedFiles: ${stats.outsideOwned.slice(0, 10).join(', ')}`);
    if (stats.filesChanged > limits.maxDiffFiles) problems.push(`${stats.filesChanged} files changed (limit ${limits.maxDiffFiles})`);
    if (lines > limits.maxDiffLines) problems.push(`${lines} lines changed (limit ${limits.maxDiffLines})`);
    if (stats.strayGitlinks.length) problems.push(strayGitlinksProblem(stats.strayGitlinks));
    if (stats.largeFiles.length) problems.push(largeFilesProblem(stats.largeFiles, limits.maxFileBytes));
    if (problems.length) {
      throw needsAttention('DIFF_GATE', 'diff_gate', `the diff gate refused the change: ${problems.join('; ')}`, {
        outsideOwned: stats.outsideOwned.slice(0, OUTSIDE_OWNED_NAMED), outsideOwnedCount: stats.outsideOwned.length, ...(stats.strayGitlinks.length ? { strayGitlinks: stats.strayGitlinks } : {}), ...(stats.largeFiles.length ? { largeFiles: stats.largeFiles } : {}),
        filesChanged: stats.filesChanged, lines, limits: { maxDiffFiles: limits.maxDiffFiles, maxDiffLines: limits.maxDiffLines, maxFileBytes: limits.maxFileBytes },
      });
    }
    return stats;
  });
}

/** What the person reads about files too large to merge (diffStats' largeFiles), and what to do. */
function largeFilesProblem(files: Array<{ path: string; bytes: number }>, limit: number): string {
  const names = files.slice(0, 10).map((f) => `${f.path} (${f.bytes} bytes)`).join(', ');
  return `${files.length} file(s) larger than limits.maxFileBytes (${limit} bytes): ${names}; once merged, a file stays in the repository's history for good. In the worktree, delete it from the task's branch (and add it to .gitignore if a tool makes it), or raise limits.maxFileBytes in .maestro/config.json, then retry`;
}

/** What the person reads about git repositories committed as gitlinks (diffStats' strayGitlinks), and what to do. */
function strayGitlinksProblem(paths: string[]): string {
  const names = paths.slice(0, 10).join(', ');
  return `${paths.length} git repositor${paths.length === 1 ? 'y' : 'ies'} inside the worktree committed as a gitlink, not as files: ${names}; its files are in no commit, and its commit is nowhere but in that folder. In the worktree, remove ${paths[0]}/.git and commit ${paths[0]} as files (or add a submodule with \`git submodule add <url>\`), then retry`;
}

export async function runExecutor(ctx: RunContext): Promise<ExecuteResult> {
  const { job } = ctx;
  const base = job.project.baseBranch;
  const wt = await worktreeStage(ctx, { sync: true, measure: true, fresh: true });
  if (wt.conflictedFiles.length) throw conflictNeeded(wt, base);
  const reflection = await reflectStage(ctx, wt.path);
  const agent = await stage(ctx, 'agent', async () => {
    const text = await callAgent(ctx, {
      stage: 'agent', role: 'execute', prompt: executorPrompt(job, reflection), cwd: wt.path, tier: job.model.tier, allowedTools: job.allowedTools ?? EDIT_TOOLS, permissionMode: 'acceptEdits',
    });
    // The agent's report goes to the run directory, never into the commit; one too large to read goes nowhere, said on the run.
    const report = moveAgentReport(wt.path, ctx.runDir);
    if (!report.moved && report.refused) ctx.emit({ type: 'phase', stage: 'report', state: 'failed', detail: { code: 'CORRUPT_FILE', message: report.refused } });
    const sha = await commitWork(ctx, wt, `${job.task.title} (${job.taskId} v${job.task.version}, run ${job.runId})`);
    return { text, commitSha: sha ?? (await git(wt.path, ['rev-parse', 'HEAD'])).stdout.trim() };
  });
  const { checks, diff } = await runChecksAndGate(ctx, wt.path, base);
  if (diff.filesChanged === 0) {
    throw needsAttention('AGENT_FAILED', 'no_changes', `the agent changed nothing for "${job.task.title}"`, { branch: wt.branch });
  }
  return {
    branch: wt.branch,
    worktreePath: wt.path,
    baseBranch: base,
    baseSha: wt.baseSha!, // read: the executor measures divergence
    commitSha: agent.commitSha,
    divergence: wt.divergence,
    diff,
    checks: checks.map(({ tail: _tail, ...rest }) => rest),
    reflection,
    summary: agent.text.slice(-2000),
  };
}
