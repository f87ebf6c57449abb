/**
 * The daemon's hooks: one HookRunner per project (its `.maestro/` hooks over
 * the global ones in $MAESTRO_HOME; the project's in the agent sandbox, when
 * the daemon has one), adapted to the orchestrator's hook points. Every cancel — a hook that said no, failed, or ran past its time —
 * is an event with its reason.
 */
import { HOOK_CANCELLED_EVENT, HookRunner, hookCancelPayload, type HookName, type HookContexts, type HookOutcome } from '../hooks/index.js';
import type { Run, Task } from '../core/types.js';
import type { ErrorRecord, ResultRecord } from '../executor/protocol/outbox.js';
import type { Store } from '../store/store.js';
import { processAgentEnv } from '../lib/agentEnv.js';
import { passEnvOf } from './projectSettings.js';
import { workRepoOf } from './repos.js';
import { runStillCounts } from './runAftermath.js';
import { projectAndOthers, sandboxSpecFor } from './jobs.js';
import type { MaestroConfig } from '../config/config.js';
import type { OrchestratorHooks } from './orchestrator.js';

export interface DaemonHooks extends OrchestratorHooks {
  /** after:planner:output: the plan to keep (rewritten or not), or a cancel. */
  afterPlannerOutput(task: Task, plan: string): Promise<HookOutcome>;
  beforeExecReview(task: Task, result: Record<string, unknown>): Promise<HookOutcome>;
}

export function createDaemonHooks(store: Store, config: Pick<MaestroConfig, 'home' | 'agentSandbox'>, timeoutMs?: number): DaemonHooks {
  const globalHome = config.home;
  const runners = new Map<string, { runner: HookRunner; updatedAt: number; others: string }>();
  const runnerFor = async (task: Task) => {
    // The project, and (in the sandbox) the other projects' folders, hidden from the hooks.
    const { project, others: otherFolders } = await projectAndOthers(store, task.projectId, !!config.agentSandbox);
    const others = otherFolders.join('\0');
    let r = runners.get(task.projectId);
    // Settings changed (passEnv), or a project registered or removed: a runner with the new environment and sandbox.
    if (!r || r.updatedAt !== project.updatedAt || r.others !== others) {
      const env = processAgentEnv({ pass: passEnvOf(project.config) });
      // On a shared remote the project's hooks are main's, in this daemon's clone (the orchestrator makes it before claiming).
      const projectRoot = workRepoOf(globalHome, project);
      r = { runner: new HookRunner({ projectRoot, globalHome, timeoutMs, env, sandbox: sandboxSpecFor(config, projectRoot, otherFolders) }), updatedAt: project.updatedAt, others };
      runners.set(task.projectId, r);
    }
    return r.runner;
  };
  // A claim veto is asked again every tick; log it when its reason changes, not every time.
  const lastClaimVeto = new Map<string, string>();
  const run = async <N extends HookName>(task: Task, name: N, context: HookContexts[N]): Promise<HookOutcome> => {
    const outcome = await (await runnerFor(task)).run(name, context);
    if (name === 'before:task:claim') {
      if (outcome.outcome !== 'cancel') {
        lastClaimVeto.delete(task.id);
        return outcome;
      }
      if (lastClaimVeto.get(task.id) === outcome.reason) return outcome;
      lastClaimVeto.set(task.id, outcome.reason ?? '');
    }
    if (outcome.outcome === 'cancel') {
      await store.events.append({ projectId: task.projectId, taskId: task.id, type: HOOK_CANCELLED_EVENT, payload: { ...hookCancelPayload(name, outcome) } });
    }
    return outcome;
  };
  const veto = (o: HookOutcome) => (o.outcome === 'cancel' ? { cancel: o.reason ?? 'cancelled by a hook' } : undefined);
  return {
    beforeClaim: async (task) => veto(await run(task, 'before:task:claim', { task })),
    beforeExecute: async (task, job) => veto(await run(task, 'before:execute', { task, job } as HookContexts['before:execute'])),
    beforeMerge: async (task, branch) => veto(await run(task, 'before:merge', { task, branch })),
    onConflict: async (task, files) => ((await run(task, 'on:conflict', { task, files })).value === 'manual' ? 'manual' : 'auto'),
    afterPlannerOutput: (task, plan) => run(task, 'after:planner:output', { task, plan }),
    beforeExecReview: (task, result) => run(task, 'before:exec-review', { task, result } as HookContexts['before:exec-review']),
  };
}

/**
 * The hooks that see a run's result before the daemon applies it:
 * after:planner:output may rewrite the plan; before:exec-review may stop
 * reviewed work from reaching the human gate. A cancel turns the result into
 * one that needs attention, with the hook's reason.
 */
export async function applyResultHooks(store: Store, hooks: DaemonHooks, run: Run, record: ResultRecord | ErrorRecord): Promise<ResultRecord | ErrorRecord> {
  if (record.type !== 'result' || record.needsAttention) return record;
  const hooked = run.kind === 'plan' || (run.kind === 'review' && record.data.next === 'exec_review');
  // A result the fence will discard (its daemon lost the task meanwhile) asks no hook: the hook's code would run
  // for nothing, and its cancel would be said on a task another daemon now holds.
  if (!hooked || !(await runStillCounts(store, run))) return record;
  const task = await store.tasks.get(run.taskId);
  const attention = (hook: string, o: HookOutcome): ResultRecord => ({ ...record, needsAttention: { reason: 'hook', details: { hook, message: o.reason ?? 'cancelled' } } });
  if (run.kind === 'plan') {
    const plan = String(record.data.markdown ?? record.data.plan ?? '');
    const o = await hooks.afterPlannerOutput(task, plan);
    if (o.outcome === 'cancel') return attention('after:planner:output', o);
    return typeof o.value === 'string' && o.value !== plan ? { ...record, data: { ...record.data, markdown: o.value } } : record;
  }
  const o = await hooks.beforeExecReview(task, record.data);
  return o.outcome === 'cancel' ? attention('before:exec-review', o) : record;
}
