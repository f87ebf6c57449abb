/** What an Orchestrator is built with: its hooks, options and the clocks it keeps. */
import type { MaestroError } from '../core/errors.js';
import type { Project, Run, Task } from '../core/types.js';
import type { ErrorRecord, ResultRecord } from '../executor/protocol/outbox.js';
import type { KnowledgeBridge } from '../knowledge/lifecycle/bridge.js';
import type { MergeHooks } from './mergeCoordinator.js';
import type { MissingFolder } from './projectFolder.js';
import type { ClaimGuard } from './scheduler.js';

export const SECOND = 1000;
/** A worker silent for this long (no heartbeat, no record) is killed and its run failed. */
export const WORKER_SILENCE_MS = 30 * SECOND;
/** Restarts of a dead worker on one run directory before the run counts as failed. */
export const MAX_WORKER_RESTARTS = 3;

export interface OrchestratorHooks extends MergeHooks {
  beforeClaim?: ClaimGuard;
  beforeExecute?(task: Task, job: Record<string, unknown>): Promise<{ cancel: string } | void>;
}

export interface OrchestratorOptions {
  hooks?: OrchestratorHooks;
  /** Environment for worker processes (tests point the scripted provider at files). */
  workerEnv?: NodeJS.ProcessEnv;
  /** The daemon's environment: its credentials pick the default provider (jobs.ts providerFor). */
  env: NodeJS.ProcessEnv;
  workerSilenceMs?: number;
  heartbeatMs?: number;
  onError: (err: Error) => void;
  onChange: () => void;
  /** Sees a run's final record before it is applied, and may change it (hooks). */
  preFinal?: (run: Run, record: ResultRecord | ErrorRecord) => Promise<ResultRecord | ErrorRecord>;
  /** Structured log lines; each one about a run carries its traceId. */
  log?: { info(obj: Record<string, unknown>, msg: string): void };
  /** Answers a waiting question (the demo's auto-reply uses it). */
  reply?: (task: Task, answer: string, who: string) => Promise<unknown>;
  /** A project's shared remote stopped answering (the error), or answers again (null): see HealthMonitor.remote. */
  onRemote?: (project: Project, err: MaestroError | null) => void;
  /** The active projects whose own folder is missing, said at each tick (projectFolder.ts; see HealthMonitor.projectFolders). */
  onFolders?: (missing: MissingFolder[]) => void;
  /** How long after a failed clone or fetch of a shared remote it is tried again (REMOTE_RETRY_MS); tests shorten it. */
  remoteRetryMs?: number;
  /** How long a clone, fetch or push may go without a word from git before it is stopped (GIT_STALL_MS); tests shorten it. */
  gitStallMs?: number;
  /** False while new work should wait (a full disk, a read-only home: see HealthMonitor). */
  mayClaim?: () => boolean;
  /** The knowledge brief and run ledgers (the daemon's KnowledgeService owns it); default: one that watches nothing. */
  knowledge?: KnowledgeBridge;
  /** How long a run's start waits for its task's previous run's knowledge before the log says so (KNOWLEDGE_END_SLOW_MS); tests shorten it. */
  knowledgeEndSlowMs?: number;
}

/** How often worktrees of finished tasks are removed (also once at start). */
export const WORKTREE_PRUNE_MS = 5 * 60 * SECOND;
