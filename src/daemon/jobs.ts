/**
 * Building job.json for a run from the store: the task version, its project,
 * the provider, and what earlier runs of this version left behind (review
 * findings, failures for the reflect stage, the review round).
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { baseBranchOf } from '../core/baseBranch.js';
import { shellWord } from '../core/diffGateWays.js';
import { MaestroError } from '../core/errors.js';
import type { TaskStatus } from '../core/status.js';
import type { Project, Run, RunKind, Task } from '../core/types.js';
import { providerConfigSchema, type JobInput, type ProviderConfig } from '../executor/protocol/job.js';
import { credentialsFor } from '../agents/credentials.js';
import { processAgentEnv } from '../lib/agentEnv.js';
import { holds } from '../lib/paths.js';
import type { SandboxSpec } from '../lib/sandbox.js';
import type { MaestroConfig } from '../config/config.js';
import type { Store } from '../store/store.js';
import { passEnvOf } from './projectSettings.js';

/** Whether Claude credentials are present: an API key, or a Claude Code login. */
export function hasClaudeCredentials(env: NodeJS.ProcessEnv): boolean {
  if (env.ANTHROPIC_API_KEY || env.CLAUDE_CODE_OAUTH_TOKEN) return true;
  return existsSync(join(homedir(), '.claude', '.credentials.json'));
}

/**
 * A run's worker environment: the allowlist, its provider's own credentials and the project's passEnv, never the
 * daemon's token or database URL. Runs with equal environments may share a warm worker (workerPool.ts).
 */
export function workerEnvFor(provider: ProviderConfig, project: Project, workerEnv: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...processAgentEnv({ credentials: (source) => credentialsFor(provider, source), pass: passEnvOf(project.config) }), ...workerEnv };
}

/** A run of `project`'s worker environment, as a list: none without the project or with an unusable provider (its run says why). */
export function workerEnvsOf(project: Project | undefined, env: NodeJS.ProcessEnv, workerEnv?: NodeJS.ProcessEnv): NodeJS.ProcessEnv[] {
  try {
    return project ? [workerEnvFor(providerFor(project, env), project, workerEnv)] : [];
  } catch {
    return [];
  }
}

/** The project's configured provider; else claude where credentials are present. */
export function providerFor(project: Project, env: NodeJS.ProcessEnv): ProviderConfig {
  const configured = project.config.provider;
  if (configured !== undefined) {
    const parsed = providerConfigSchema.safeParse(configured);
    if (!parsed.success) {
      throw new MaestroError('CONFIG_INVALID', `Project ${project.name}: config.provider is invalid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    }
    return parsed.data;
  }
  if (hasClaudeCredentials(env)) return { kind: 'claude' };
  throw new MaestroError(
    'CONFIG_INVALID',
    `Project ${project.name} has no agent provider: set ANTHROPIC_API_KEY (or log in with Claude Code), or give the project one (maestro project config set provider.kind <kind> --project ${shellWord(project.name)}, or PATCH /api/projects/${project.id}).`,
  );
}

export interface JobContext {
  runId: string;
  traceId: string;
  kind: RunKind;
  task: Task;
  project: Project;
  /** Earlier runs of this task version, oldest first. */
  history: Run[];
  worktreeRoot: string;
  /** The daemon's environment (the default provider's credentials). */
  env: NodeJS.ProcessEnv;
  heartbeatMs: number;
  /** "What the project already knows": the knowledge brief (KnowledgeBridge.briefFor). */
  knowledge?: string;
  /** The daemon's home and its `agentSandbox`: the run's agent and checks start in that sandbox. */
  sandbox?: Pick<MaestroConfig, 'home' | 'agentSandbox'>;
  /** The other registered projects' folders: hidden in that sandbox. */
  otherProjects?: readonly string[];
}

export function buildJob(ctx: JobContext): JobInput {
  const { task, project, history } = ctx;
  const sameKind = history.filter((r) => r.kind === ctx.kind);
  // What the agent did wrong, for the reflect stage: not a daemon's lost lease or a dead worker.
  const failures = history
    .filter((r) => r.status === 'failed' && r.error && !/^(its daemon lost the lease|WORKER_DIED|WORKER_SILENT)/.test(r.error))
    .map((r) => ({ error: r.error!, log: '' }));
  // Rounds since a person last retried the task: a retry after the rounds ran out gives it a fresh set, not one more.
  const reviewRound = history.filter((r) => r.kind === 'review' && r.status === 'succeeded' && r.attempt > task.retryBaseline).length + 1;
  const reviewFeedback = typeof task.result?.feedback === 'string' ? task.result.feedback : null;
  const feedback = [task.feedback, reviewFeedback].filter(Boolean).join('\n\n') || null;
  return {
    schemaVersion: 1,
    runId: ctx.runId,
    taskId: task.id,
    traceId: ctx.traceId,
    kind: ctx.kind,
    attempt: sameKind.length + 1,
    task: {
      title: task.title,
      description: task.spec ?? '',
      complexity: task.complexity,
      version: task.version,
      ownedFiles: task.ownedFiles,
      expectedOutput: task.expectedOutput,
      feedback,
      plan: task.plan,
    },
    project: {
      id: project.id,
      repoPath: project.repoPath,
      baseBranch: baseBranchOf(project),
      worktreeRoot: ctx.worktreeRoot,
      knowledge: ctx.knowledge ?? '',
    },
    provider: providerFor(project, ctx.env),
    reviewRound,
    previousFailures: failures.slice(-3),
    heartbeatMs: ctx.heartbeatMs,
    sandbox: sandboxSpecFor(ctx.sandbox, project.repoPath, ctx.otherProjects),
  };
}

/**
 * The sandbox of an agent the daemon starts (a run's, or the observer's): the daemon's home hidden (its token,
 * its database, every other run and worktree) with the folders the config hides, and the other registered
 * projects (`others`: their checkouts hold their `.env` files and their remotes' credentials, none of this run's
 * business); the folder it works on (a project's repository, the observer's workspace) readable, though it may be
 * a clone in that home or lie inside another project's folder.
 */
export function sandboxSpecFor(config: Pick<MaestroConfig, 'home' | 'agentSandbox'> | undefined, folder: string, others: readonly string[] = []): SandboxSpec | null {
  const s = config?.agentSandbox;
  if (!s) return null;
  // Not a folder that holds this one (a monorepo registered beside its parts) or the user's home (where the
  // tools and their state live): hiding it would take the run's own ground away.
  const hidden = others.filter((o) => !holds(o, folder) && !holds(o, homedir()));
  return { kind: 'bwrap', hide: [config.home, ...s.hide, ...hidden], readOnly: [folder], writable: s.writable, ...(s.sockets ? { sockets: s.sockets } : {}), ...(s.network ? { network: s.network } : {}) };
}

/**
 * A task's project and, when agents run sandboxed, the other registered projects' folders (which its sandbox hides,
 * sandboxSpecFor): one read of the project list, none without a sandbox.
 */
export async function projectAndOthers(store: Store, projectId: string, sandboxed: boolean): Promise<{ project: Project; others: string[] }> {
  const projects = sandboxed ? await store.projects.list() : [];
  const project = projects.find((p) => p.id === projectId) ?? (await store.projects.get(projectId));
  return { project, others: projects.filter((p) => p.id !== projectId).map((p) => p.repoPath) };
}

/** The run a claimed task's status calls for, and the status it runs in. */
export function runKindFor(task: Task): { kind: RunKind; status: TaskStatus } {
  switch (task.status) {
    case 'queued':
      return task.plan === null && task.complexity !== 'easy' && task.parentId === null ? { kind: 'plan', status: 'planning' } : { kind: 'execute', status: 'executing' };
    case 'planning':
      return { kind: 'plan', status: 'planning' };
    case 'reviewing':
      return { kind: 'review', status: 'reviewing' };
    case 'executing':
      return task.result?.needsConflictRun ? { kind: 'conflict', status: 'executing' } : { kind: 'execute', status: 'executing' };
    default:
      return { kind: 'execute', status: 'executing' };
  }
}
