/**
 * runPipeline(job, io): one run, start to end, on a run directory. Used by the
 * worker process and callable in-process (tests, the bench, a daemon that
 * chooses to). It never throws for a failed run: it writes and returns the
 * final outbox record, a `result` or an `error`.
 */
import { performance } from 'node:perf_hooks';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { repairTornTail } from './protocol/files.js';
import { TRANSCRIPT_FILE } from './protocol/transcript.js';
import { createProvider, type AgentProvider } from '../agents/index.js';
import { MaestroError, coerceError } from '../core/errors.js';
import { AttentionError, type RunContext } from './context.js';
import { runMergeCheck } from './pipelines/mergeCheck.js';
import { runConflict } from './pipelines/conflict.js';
import { runExecutor } from './pipelines/executor.js';
import { runPlanner } from './pipelines/planner.js';
import { runReviewer } from './pipelines/reviewer.js';
import { DEFAULT_LIMITS, type Job } from './protocol/job.js';
import { loadProjectConfig } from './projectConfig.js';
import { resolveTiers } from '../agents/tiers.js';
import { providerTiers } from '../agents/credentials.js';
import { OutboxWriter, type OutboxRecord, type ErrorRecord, type NeedsAttention, type OutboxDraft, type ResultRecord, type Usage } from './protocol/outbox.js';
import { StageBook } from './protocol/stages.js';
import { onSandboxProxyRefusal } from '../lib/sandboxNet/proxy.js';

export interface RunIO {
  runDir: string;
  /** The worker's environment (its entry reads it; a run's allowlist, src/lib/agentEnv.ts): the model tiers. None by default. */
  env?: NodeJS.ProcessEnv;
  /** Aborting it stops the run at the next safe point (the worker wires SIGTERM here). */
  signal?: AbortSignal;
  /** Replaces the provider the job names (benchmarks); tests use the job's own. */
  provider?: AgentProvider;
  /** Sees every record after it is written (the worker does not need it; in-process callers may). */
  onRecord?: (record: OutboxRecord) => void;
  /** Runs the two reviews one after the other: only the benchmark's serial baseline uses it. */
  serialReviews?: boolean;
  /** The writer to share with the caller (the worker's heartbeats), so sequence numbers stay one series. */
  outbox?: OutboxWriter;
}

/** Error codes that are worth another try without a human. */
const RETRYABLE = new Set(['INTERRUPTED', 'CHECK_FAILED']);

function attentionFor(err: MaestroError): NeedsAttention | undefined {
  if (err instanceof AttentionError) return err.attention;
  if (RETRYABLE.has(err.code) || (err.code === 'MERGE_CONFLICT' && err.details?.next === 'conflict')) return undefined;
  return { reason: err.code.toLowerCase(), details: { message: err.message, ...err.details } };
}

export async function runPipeline(job: Job, io: RunIO): Promise<ResultRecord | ErrorRecord> {
  mkdirSync(io.runDir, { recursive: true });
  repairTornTail(join(io.runDir, TRANSCRIPT_FILE));
  const outbox = io.outbox ?? new OutboxWriter(io.runDir, { traceId: job.traceId, runId: job.runId });
  const stages = new StageBook(io.runDir);
  // A restarted worker starts from what the finished stages spent (an unfinished stage's call is not known).
  const usage: Usage = stages.savedUsage<Usage>() ?? { inputTokens: 0, outputTokens: 0, costUsd: 0, models: [], agentCalls: 0 };
  const emit = (draft: OutboxDraft) => {
    const record = outbox.write(draft);
    io.onRecord?.(record);
    return record;
  };
  let currentStage: string | null = null;
  const ctxEmit = (draft: OutboxDraft) => {
    // Tool phases (`tool:<name>`) happen inside a stage; an error still belongs to the stage.
    if (draft.type === 'phase' && draft.state === 'start' && !draft.stage.startsWith('tool:')) currentStage = draft.stage;
    emit(draft);
  };
  emit({ type: 'phase', stage: 'run', state: 'start', detail: { kind: job.kind, pid: process.pid } });
  const stopHearing = sayRefusals(emit);
  try {
    const ctx = runContext(job, io, { outbox, stages, usage, emit: ctxEmit });
    const { data, attention } = await runKind(ctx);
    emit({ type: 'phase', stage: 'run', state: 'done' });
    return emit({ type: 'result', kind: job.kind, usage, data: data as Record<string, unknown>, ...(attention ? { needsAttention: attention } : {}) }) as ResultRecord;
  } catch (raw) {
    const err = raw instanceof MaestroError ? raw : new MaestroError('INTERNAL', coerceError(raw).message, { cause: raw });
    const attention = attentionFor(err);
    emit({ type: 'phase', stage: 'run', state: 'failed', detail: { code: err.code } });
    return emit({
      type: 'error',
      code: err.code,
      message: err.message,
      stage: currentStage,
      retryable: RETRYABLE.has(err.code),
      usage,
      ...(attention ? { needsAttention: attention } : {}),
      ...(err.details ? { details: err.details } : {}),
    }) as ErrorRecord;
  } finally {
    stopHearing();
  }
}

/**
 * Each destination the sandbox's proxy refuses this run's processes (a "proxied" network), once, as a failed
 * `network` phase whose summary is the proxy's reason: on the board's live output while the tool still retries, whatever the tool
 * says of it later. The worker runs one run at a time, so what its proxy refuses meanwhile is this run's.
 */
function sayRefusals(emit: (draft: OutboxDraft) => unknown): () => void {
  const said = new Set<string>();
  return onSandboxProxyRefusal((refusal) => {
    if (said.has(refusal)) return;
    said.add(refusal);
    emit({ type: 'phase', stage: 'network', state: 'failed', detail: { summary: refusal } });
  });
}

/** What every pipeline gets: the limits, checks and tiers (defaults, then the project's `.maestro/`, then the job), the provider, the clocks. */
function runContext(job: Job, io: RunIO, parts: Pick<RunContext, 'outbox' | 'stages' | 'usage' | 'emit'>): RunContext {
  // The project's own settings sit between the defaults and what the job says.
  const project = loadProjectConfig(job.project.repoPath);
  return {
    job,
    limits: { ...DEFAULT_LIMITS, ...project.limits, ...job.limits },
    checks: job.checks ?? project.checks,
    // The provider's own model names, then the project's `.maestro/` models, then the provider config's, then env.
    tiers: resolveTiers(io.env ?? {}, { ...providerTiers(job.provider.kind), ...project.models, ...('models' in job.provider ? job.provider.models : {}) }),
    runDir: io.runDir,
    outbox: parts.outbox,
    stages: parts.stages,
    provider: io.provider ?? createProvider(job.provider),
    signal: io.signal ?? new AbortController().signal,
    usage: parts.usage,
    mono: () => performance.timeOrigin + performance.now(),
    emit: parts.emit,
    serialReviews: io.serialReviews ?? false,
  };
}

/** The pipeline of the job's kind; reviews and conflict resolution may also ask for a human. */
async function runKind(ctx: RunContext): Promise<{ data: object; attention?: NeedsAttention }> {
  const kind = ctx.job.kind;
  switch (kind) {
    case 'plan':
      return { data: await runPlanner(ctx) };
    case 'execute':
      return { data: await runExecutor(ctx) };
    case 'review': {
      const r = await runReviewer(ctx);
      return { data: r.result, attention: r.attention };
    }
    case 'conflict': {
      const r = await runConflict(ctx);
      return { data: r.result, attention: r.attention };
    }
    case 'merge_check':
      return { data: await runMergeCheck(ctx) };
    default: {
      const never: never = kind;
      throw new MaestroError('JOB_INVALID', `unknown run kind ${String(never)}`);
    }
  }
}
