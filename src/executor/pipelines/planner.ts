/**
 * Planner pipeline: the task and the project's knowledge in, a plan with
 * subtasks out (planParse.ts checks it). A malformed answer gets one retry
 * with the parse error fed back; a second one needs a human.
 */
import { READ_ONLY_TOOLS } from '../../agents/types.js';
import { detachedWorktree, removeWorktree } from '../../git/worktree.js';
import { callAgent, needsAttention, stage, type RunContext } from '../context.js';
import { parsePlanOutput, PlanParseError, type PlanResult } from './planParse.js';
import { plannerPrompt } from './prompts.js';

/**
 * The planner reads the project from a detached checkout of main, never from
 * the main checkout itself: tools are read-only, but a command agent cannot be
 * held to that, and main is only ever changed by mergeIntoMain.
 */
export async function runPlanner(ctx: RunContext): Promise<PlanResult> {
  const { job } = ctx;
  const cwd = await detachedWorktree(job.project.repoPath, job.project.worktreeRoot, `${job.taskId}-plan`, job.project.baseBranch);
  try {
    return await plan(ctx, cwd);
  } finally {
    await removeWorktree(job.project.repoPath, cwd);
  }
}

async function plan(ctx: RunContext, cwd: string): Promise<PlanResult> {
  const { job } = ctx;
  const ask = (stageName: string, parseError?: string) => stage(ctx, stageName, () => callAgent(ctx, {
    stage: stageName,
    role: 'plan',
    prompt: plannerPrompt(job, parseError),
    cwd,
    tier: job.model.tier,
    allowedTools: READ_ONLY_TOOLS,
    permissionMode: 'plan',
  }));
  const first = await ask('plan');
  try {
    return parsePlanOutput(first, ctx.limits.maxSubtasks);
  } catch (err) {
    if (!(err instanceof PlanParseError)) throw err;
    const second = await ask('plan:retry', err.message);
    try {
      return parsePlanOutput(second, ctx.limits.maxSubtasks);
    } catch (err2) {
      if (!(err2 instanceof PlanParseError)) throw err2;
      throw needsAttention('PLAN_INVALID', 'plan_invalid', `the planner's answer was malformed twice: ${err2.message}`, { firstError: err.message, error: err2.message });
    }
  }
}
