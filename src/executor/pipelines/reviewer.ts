/**
 * Reviewer pipeline: a code review and a security review of the task branch,
 * run at the same time (Promise.all), read-only, on the strongest tier. Each
 * records when it started and ended (monotonic ms) so the overlap is visible.
 * Any reject is a hard gate: back to executing with the findings as feedback,
 * or to a human once the configured review rounds are used up.
 */
import { READ_ONLY_TOOLS } from '../../agents/types.js';
import { headSha } from '../../git/git.js';
import { diffText } from '../../git/diff.js';
import { callAgent, needsAttention, stage, type RunContext } from '../context.js';
import type { NeedsAttention } from '../protocol/outbox.js';
import { reviewPrompt } from './prompts.js';
import { formatFindings, parseVerdict, VerdictParseError, type Finding, type Verdict } from './verdictParse.js';
import { headOf } from '../../git/worktree.js';
import { leftBranch, offBranch, worktreeStage } from './worktreeStage.js';

export interface SingleReview extends Verdict {
  reviewer: 'code' | 'security';
  /** Monotonic ms (performance.timeOrigin + now) when the review began and ended. */
  startedAt: number;
  endedAt: number;
}

export interface ReviewResult {
  verdict: 'approve' | 'reject';
  findings: Array<Finding & { reviewer: 'code' | 'security' }>;
  reviews: SingleReview[];
  round: number;
  /** What the daemon does next: exec_review (human gate), execute again with `feedback`, or nothing (needs attention). */
  next: 'exec_review' | 'execute' | 'needs_attention';
  feedback: string | null;
  branch: string;
  commitSha: string;
}

async function reviewOne(ctx: RunContext, reviewer: 'code' | 'security', cwd: string, diff: string): Promise<SingleReview> {
  const name = `review:${reviewer}` as const;
  return stage(ctx, name, async () => {
    const startedAt = ctx.mono();
    const ask = (parseError?: string) => callAgent(ctx, {
      stage: name, role: name, prompt: reviewPrompt(ctx.job, reviewer, diff, parseError), cwd, tier: 'hard', allowedTools: READ_ONLY_TOOLS, permissionMode: 'plan',
    });
    let verdict: Verdict;
    try {
      verdict = parseVerdict(await ask());
    } catch (err) {
      if (!(err instanceof VerdictParseError)) throw err;
      try {
        verdict = parseVerdict(await ask(err.message));
      } catch (err2) {
        if (!(err2 instanceof VerdictParseError)) throw err2;
        throw needsAttention('VERDICT_INVALID', 'verdict_invalid', `the ${reviewer} reviewer's answer was malformed twice: ${err2.message}`, { reviewer, error: err2.message });
      }
    }
    return { reviewer, ...verdict, startedAt, endedAt: ctx.mono() };
  });
}

/** Both reviews of the worktree's HEAD against the base; shared by the reviewer and conflict pipelines. */
export async function reviewBranch(ctx: RunContext, worktree: string, branch: string): Promise<{ result: ReviewResult; attention?: NeedsAttention }> {
  const { job, limits } = ctx;
  const diff = await diffText(worktree, job.project.baseBranch, 'HEAD');
  const reviewed = await headSha(worktree);
  const reviews = ctx.serialReviews
    ? [await reviewOne(ctx, 'code', worktree, diff), await reviewOne(ctx, 'security', worktree, diff)]
    : await Promise.all([reviewOne(ctx, 'code', worktree, diff), reviewOne(ctx, 'security', worktree, diff)]);
  await assertUnmoved(ctx, worktree, branch, reviewed);
  const findings = reviews.flatMap((r) => r.findings.map((f) => ({ ...f, reviewer: r.reviewer })));
  const rejected = reviews.some((r) => r.verdict === 'reject');
  const round = job.reviewRound;
  const base = { findings, reviews, round, branch, commitSha: reviewed };
  if (!rejected) return { result: { ...base, verdict: 'approve', next: 'exec_review', feedback: null } };
  const feedback = formatFindings(findings.length ? findings : [{ severity: 'high', message: 'rejected without findings', reviewer: 'code' }]);
  if (round >= limits.reviewRounds) {
    const e = needsAttention('REVIEW_ROUNDS_EXHAUSTED', 'review_rounds', `review rejected the change in round ${round} of ${limits.reviewRounds}`, { rounds: round, findings });
    return { result: { ...base, verdict: 'reject', next: 'needs_attention', feedback }, attention: e.attention };
  }
  return { result: { ...base, verdict: 'reject', next: 'execute', feedback } };
}

/**
 * The verdicts hold only for the commit the reviewers were shown. A reviewer that can run commands (a CLI
 * agent) may have switched branches or committed on the task's branch: what would then be merged is not
 * what was reviewed, so the review does not count.
 */
async function assertUnmoved(ctx: RunContext, worktree: string, branch: string, reviewed: string): Promise<void> {
  const head = headOf(worktree);
  if (head && offBranch(head, branch)) throw leftBranch(ctx.job.taskId, { path: worktree, branch }, head);
  const now = await headSha(worktree);
  if (now !== reviewed) {
    throw needsAttention('BRANCH_MOVED', 'branch_moved',
      `${branch} moved while it was reviewed (from ${reviewed.slice(0, 12)} to ${now.slice(0, 12)}): a reviewer changed it, so the verdicts are about code that is no longer its tip; look at the commits, then \`maestro task retry ${ctx.job.taskId}\``,
      { branch, reviewed, now });
  }
}

export async function runReviewer(ctx: RunContext): Promise<{ result: ReviewResult; attention?: NeedsAttention }> {
  // No sync, no divergence check: the review judges exactly what the executor committed.
  const wt = await worktreeStage(ctx, { sync: false, measure: false, fresh: false });
  return reviewBranch(ctx, wt.path, wt.branch);
}
