/**
 * What every pipeline runs on: the job, the outbox writer, the stage book, the
 * agent provider, and the helpers that make an agent call a Maestro agent call
 * (model fallback, timeout, tokens to outbox and transcript, clarifying
 * questions through the inbox, injected instructions at breakpoints).
 */
import { createHash } from 'node:crypto';
import { MaestroError, coerceError } from '../core/errors.js';
import { CLARIFY_PATTERN, type AgentProvider, type AgentRequest, type AgentResult, type AgentRole, type PermissionMode, type StreamDiagnostics } from '../agents/types.js';
import { agentRunFolder } from './agentRunFolder.js';
import { modelChain } from '../agents/tiers.js';
import type { Complexity } from '../core/types.js';
import { worktreePath, type CheckConfig, type Job, type Limits } from './protocol/job.js';
import type { RunSandbox } from '../lib/sandbox.js';
import type { NeedsAttention, OutboxDraft, OutboxWriter, Usage } from './protocol/outbox.js';
import { inboxWaiter, readInbox } from './protocol/inbox.js';
import type { StageBook } from './protocol/stages.js';
import { appendTranscript } from './protocol/transcript.js';

export interface RunContext {
  job: Job;
  /** Defaults, then the project's `.maestro/` limits, then the job's. */
  limits: Limits;
  /** The job's checks, or the project's `.maestro/` ones. */
  checks: CheckConfig[];
  /** Model names per tier: defaults, the project's `.maestro/` models, then MAESTRO_MODEL_* env. */
  tiers: Record<Complexity, string>;
  runDir: string;
  outbox: OutboxWriter;
  stages: StageBook;
  provider: AgentProvider;
  signal: AbortSignal;
  usage: Usage;
  /** Monotonic clock in ms (performance.timeOrigin based), for overlap of concurrent stages. */
  mono: () => number;
  emit: (draft: OutboxDraft) => void;
  /** The benchmark's serial baseline; pipelines run the two reviews concurrently otherwise. */
  serialReviews: boolean;
}

/** The sandbox of what this run starts (its agent, its checks), with the task's worktree as the folder it may write. */
export function runSandbox(ctx: Pick<RunContext, 'job'>): RunSandbox | undefined {
  return ctx.job.sandbox ? { spec: ctx.job.sandbox, worktree: worktreePath(ctx.job) } : undefined;
}

/**
 * One provider call. A sandboxed agent sees a scratch folder at the run directory's path; what it recorded
 * there (loads, staged candidates) is carried into the run's ledger after the call (agentRunFolder.ts).
 */
async function runAgent(ctx: RunContext, stageName: string, req: AgentRequest): Promise<AgentResult> {
  const sandbox = runSandbox(ctx);
  if (!sandbox) return ctx.provider.run(req);
  const folder = agentRunFolder(ctx.runDir);
  try {
    return await ctx.provider.run({ ...req, sandbox: { ...sandbox, runFolder: { path: ctx.runDir, scratch: folder.scratch } } });
  } finally {
    let warning: string | null;
    try {
      warning = folder.settle();
    } catch (err) {
      warning = `The agent's knowledge records were not kept: ${(err as Error).message}`;
    }
    if (warning) appendTranscript(ctx.runDir, { at: Date.now(), stage: stageName, role: 'notice', text: warning });
    folder.remove();
  }
}

/** A failure the daemon should show a human: the error record carries `needsAttention`. */
export class AttentionError extends MaestroError {
  readonly attention: NeedsAttention;
  constructor(error: MaestroError, reason: string, details: Record<string, unknown> = {}) {
    super(error.code, error.message, { details: { ...error.details, ...details }, cause: error });
    this.attention = { reason, details: { message: error.message, ...error.details, ...details } };
  }
}

export function needsAttention(code: ConstructorParameters<typeof MaestroError>[0], reason: string, message: string, details: Record<string, unknown> = {}): AttentionError {
  return new AttentionError(new MaestroError(code, message, { details }), reason, details);
}

/**
 * Runs `fn` as a named stage unless stages.json says it is done; then its
 * recorded output is returned and the agent is not called again.
 */
export async function stage<T>(ctx: RunContext, name: string, fn: () => Promise<T>): Promise<T> {
  if (ctx.stages.isDone(name)) {
    ctx.emit({ type: 'phase', stage: name, state: 'skipped' });
    return ctx.stages.output<T>(name);
  }
  if (ctx.signal.aborted) throw new MaestroError('INTERRUPTED', `stopped before stage ${name}`);
  ctx.emit({ type: 'phase', stage: name, state: 'start', mono: ctx.mono() });
  try {
    const output = await fn();
    ctx.stages.markDone(name, output, { ...ctx.usage, models: [...ctx.usage.models] });
    ctx.emit({ type: 'phase', stage: name, state: 'done', mono: ctx.mono() });
    return output;
  } catch (err) {
    const e = coerceError(err);
    // What stopped a run for a person goes with it, as data (the API's task detail reads the diff gate's refusal
    // from it to say which limit to raise); other errors' details (a check's log tail) stay in the outbox.
    const attention = e instanceof AttentionError ? { attention: e.attention.reason, details: e.details } : {};
    ctx.emit({ type: 'phase', stage: name, state: 'failed', mono: ctx.mono(), detail: { message: e.message, ...attention } });
    throw err;
  }
}

/**
 * Instructions injected for this stage: new inbox messages are consumed and
 * kept with the stage in stages.json, so a restarted stage gets them again.
 */
export function takeInstructions(ctx: RunContext, stageName: string): string[] {
  const fresh = readInbox(ctx.runDir).filter((m) => m.type === 'instruction' && !ctx.stages.isConsumed(m.id));
  for (const m of fresh) appendTranscript(ctx.runDir, { at: Date.now(), stage: stageName, role: 'instruction', text: m.text });
  return ctx.stages.takeInstructions(stageName, fresh);
}

/** Replies this worker process took: one taken by an earlier process of the run is an answer from before a restart. */
const takenHere = new Set<string>();

/**
 * The longest question put to a person. The question is the agent's text (a `CLARIFY:` line of any length, or its
 * ask tool's argument), and it is stored twice in the event log (run.clarify, and the task.status to
 * awaiting_input), sent to every board and shown at the task; the whole of it stays in the run's transcript.
 */
export const MAX_QUESTION_CHARS = 10_000;

/** The question as the person is asked it: up to MAX_QUESTION_CHARS, then where the rest is. */
function askedAs(question: string): string {
  if (question.length <= MAX_QUESTION_CHARS) return question;
  return `${question.slice(0, MAX_QUESTION_CHARS)}… (the question is ${question.length.toLocaleString('en-US')} characters; the whole of it is in the run's transcript)`;
}

/** Writes a clarify record and waits for a reply in inbox.json (matching clarifyId, or a reply without replyTo). */
export async function askUser(ctx: RunContext, stageName: string, fullQuestion: string): Promise<string> {
  const question = askedAs(fullQuestion);
  // Stable per (run, stage, question): a worker restarted while waiting asks under the same id, so a reply to the first ask still counts.
  const clarifyId = `c-${createHash('sha256').update(`${ctx.job.runId}\0${stageName}\0${fullQuestion}`).digest('hex').slice(0, 16)}`;
  // Answered before a restart: a worker killed after it took the reply replays the stage and meets the same
  // question. The person's answer stands (asking again lost it: the reply was marked taken), and nobody is asked.
  const answered = readInbox(ctx.runDir).find((m) => m.type === 'reply' && m.replyTo === clarifyId && ctx.stages.isConsumed(m.id) && !takenHere.has(m.id));
  if (answered) {
    takenHere.add(answered.id);
    appendTranscript(ctx.runDir, { at: Date.now(), stage: stageName, role: 'reply', text: answered.text });
    return answered.text;
  }
  ctx.emit({ type: 'clarify', stage: stageName, clarifyId, question });
  appendTranscript(ctx.runDir, { at: Date.now(), stage: stageName, role: 'question', text: fullQuestion });
  const deadline = ctx.limits.clarifyTimeoutMs ? Date.now() + ctx.limits.clarifyTimeoutMs : Infinity;
  const inbox = inboxWaiter(ctx.runDir);
  try {
    for (;;) {
      const reply = readInbox(ctx.runDir).find((m) => m.type === 'reply' && !ctx.stages.isConsumed(m.id) && (m.replyTo === undefined || m.replyTo === clarifyId));
      if (reply) {
        ctx.stages.consume(reply.id);
        takenHere.add(reply.id);
        appendTranscript(ctx.runDir, { at: Date.now(), stage: stageName, role: 'reply', text: reply.text });
        return reply.text;
      }
      if (Date.now() > deadline) throw needsAttention('AGENT_TIMEOUT', 'clarify_timeout', `no reply to "${question}" within ${ctx.limits.clarifyTimeoutMs} ms`, { question });
      try {
        await inbox.next(ctx.job.inboxPollMs, ctx.signal);
      } catch {
        throw new MaestroError('INTERRUPTED', 'stopped while waiting for a reply');
      }
    }
  } finally {
    inbox.close();
  }
}

export interface AgentCall {
  stage: string;
  role: AgentRole;
  prompt: string;
  cwd: string;
  tier: Complexity;
  allowedTools: string[];
  permissionMode: PermissionMode;
}

/** A timer that stops while a human is being asked, so a slow reply is not an agent timeout. */
function pausableTimeout(ms: number, onFire: () => void) {
  let remaining = ms;
  let started = Date.now();
  let timer: NodeJS.Timeout | null = setTimeout(onFire, remaining);
  return {
    pause() {
      if (!timer) return;
      clearTimeout(timer);
      timer = null;
      remaining -= Date.now() - started;
    },
    resume() {
      if (timer) return;
      started = Date.now();
      timer = setTimeout(onFire, Math.max(0, remaining));
    },
    clear() {
      if (timer) clearTimeout(timer);
      timer = null;
    },
  };
}

const MAX_CLARIFY_ROUNDS = 5;

/** How much of a failed call's output its transcript keeps: the end, where an agent says why it stopped (64 KiB of text). */
const FAILED_OUTPUT_CHARS = 64 * 1024;

/**
 * The last `max` characters of an agent's streamed output in one call, in bounded memory (an agent may print hundreds
 * of MB): kept for the transcript if the call fails (an answer that stands is written whole).
 */
class OutputTail {
  private parts: string[] = [];
  private length = 0;
  private cut = false;
  constructor(private readonly max: number) {}
  add(text: string): void {
    this.parts.push(text);
    this.length += text.length;
    if (this.length <= 2 * this.max) return;
    const kept = this.parts.join('').slice(-this.max);
    this.cut = true;
    this.parts = [kept];
    this.length = kept.length;
  }
  clear(): void {
    this.parts = [];
    this.length = 0;
    this.cut = false;
  }
  text(): string {
    const all = this.parts.join('');
    return all.length > this.max || this.cut ? `…${all.slice(-this.max)}` : all;
  }
}

/** An answer that stands: its usage counted, its text (and what was noticed of its stream) in the transcript. */
function recordAnswer(ctx: RunContext, stage: string, result: AgentResult): void {
  ctx.usage.inputTokens += result.usage.inputTokens;
  ctx.usage.outputTokens += result.usage.outputTokens;
  ctx.usage.costUsd += result.usage.costUsd;
  appendTranscript(ctx.runDir, { at: Date.now(), stage, role: 'agent', text: result.text });
  if (result.diagnostics) appendTranscript(ctx.runDir, { at: Date.now(), stage, role: 'notice', text: describeDiagnostics(result.diagnostics) });
}

/**
 * A failed call in the transcript, which `task logs` reads: what the agent printed in it, then why it failed.
 * Without these a failed call showed its prompt and nothing of why it failed.
 */
function transcribeFailure(ctx: RunContext, stage: string, printed: string, failure: string, model: string): void {
  if (printed) appendTranscript(ctx.runDir, { at: Date.now(), stage, role: 'agent', text: printed });
  appendTranscript(ctx.runDir, { at: Date.now(), stage, role: 'error', text: `${failure} (model ${model})` });
}

/**
 * One agent call with everything around it. Walks the model chain (one retry
 * on the next weaker model), turns a timeout into AGENT_TIMEOUT and a final
 * failure into a needs-attention error. Returns the agent's final text.
 */
export async function callAgent(ctx: RunContext, call: AgentCall): Promise<string> {
  const chain = ctx.job.model.chain && call.tier === ctx.job.model.tier ? ctx.job.model.chain.slice(0, 2) : modelChain(call.tier, ctx.tiers);
  const instructions = takeInstructions(ctx, call.stage);
  const basePrompt = instructions.length ? `${call.prompt}\n\n## Instructions from the team\n${instructions.map((i) => `- ${i}`).join('\n')}` : call.prompt;
  let lastError: MaestroError | null = null;
  for (const model of chain) {
    const controller = new AbortController();
    let timedOut = false;
    const timer = pausableTimeout(ctx.limits.agentTimeoutMs, () => {
      timedOut = true;
      controller.abort();
    });
    const onAbort = () => controller.abort();
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    const printed = new OutputTail(FAILED_OUTPUT_CHARS);
    try {
      appendTranscript(ctx.runDir, { at: Date.now(), stage: call.stage, role: 'prompt', text: basePrompt });
      let prompt = basePrompt;
      let resumeSessionId: string | undefined;
      for (let round = 0; ; round++) {
        ctx.usage.agentCalls++;
        ctx.usage.models.push(model);
        const result = await runAgent(ctx, call.stage, {
          role: call.role,
          taskTitle: ctx.job.task.title,
          prompt,
          cwd: call.cwd,
          model,
          allowedTools: call.allowedTools,
          permissionMode: call.permissionMode,
          projectRoot: ctx.job.project.repoPath,
          signal: controller.signal,
          ...(resumeSessionId ? { resumeSessionId } : {}),
          onToken: (text) => {
            printed.add(text);
            ctx.emit({ type: 'token', stage: call.stage, text });
          },
          onTool: (e) => {
            ctx.emit({ type: 'phase', stage: `tool:${e.name}`, state: e.state, detail: { stage: call.stage, callId: e.id, ...(e.summary ? { summary: e.summary } : {}) } });
          },
          askUser: async (question) => {
            timer.pause();
            try {
              return await askUser(ctx, call.stage, question);
            } finally {
              timer.resume();
            }
          },
        });
        printed.clear();
        recordAnswer(ctx, call.stage, result);
        const question = CLARIFY_PATTERN.exec(result.text)?.[1];
        if (!question || round >= MAX_CLARIFY_ROUNDS) return result.text;
        // Agents that cannot pause end their turn with a question; ask, then continue the session.
        timer.pause();
        const reply = await askUser(ctx, call.stage, question.trim());
        timer.resume();
        resumeSessionId = result.sessionId ?? undefined;
        prompt = resumeSessionId ? reply : `${basePrompt}\n\nYou asked: ${question.trim()}\nThe answer: ${reply}`;
      }
    } catch (err) {
      if (ctx.signal.aborted) throw new MaestroError('INTERRUPTED', `stopped during ${call.stage}`, { cause: err });
      const e = err instanceof MaestroError ? err : new MaestroError('AGENT_FAILED', coerceError(err).message, { cause: err });
      transcribeFailure(ctx, call.stage, printed.text(), timedOut ? `the agent (${model}) ran past ${ctx.limits.agentTimeoutMs} ms` : `${e.code}: ${e.message}`, model);
      if (e instanceof AttentionError || e.code === 'SCRIPT_INVALID') throw e;
      // A weaker model cannot install the tool or log it in: stop here with the reason.
      if (e.code === 'AGENT_NOT_INSTALLED' || e.code === 'AGENT_LOGIN_REQUIRED') {
        ctx.emit({ type: 'phase', stage: call.stage, state: 'failed', detail: { model, message: e.message, fallingBack: false } });
        throw new AttentionError(e, e.code.toLowerCase(), { stage: call.stage, models: chain });
      }
      lastError = timedOut ? new MaestroError('AGENT_TIMEOUT', `the agent (${model}) ran past ${ctx.limits.agentTimeoutMs} ms in ${call.stage}`) : e;
      ctx.emit({ type: 'phase', stage: call.stage, state: 'failed', detail: { model, message: lastError.message, fallingBack: model !== chain[chain.length - 1] } });
    } finally {
      timer.clear();
      ctx.signal.removeEventListener('abort', onAbort);
    }
  }
  const e = lastError ?? new MaestroError('AGENT_FAILED', 'no model to run');
  throw new AttentionError(e, ATTENTION_REASONS[e.code] ?? 'agent_failed', { stage: call.stage, models: chain });
}

/** needsAttention.reason for an agent call that failed on every model of its chain. */
const ATTENTION_REASONS: Partial<Record<string, string>> = {
  AGENT_TIMEOUT: 'agent_timeout',
  AGENT_RATE_LIMITED: 'agent_rate_limited',
  AGENT_STREAM_BROKEN: 'agent_stream_broken',
};

function describeDiagnostics(d: StreamDiagnostics): string {
  const parts: string[] = [];
  if (d.malformed.length) parts.push(`${d.malformed.length} line(s) of the agent's event stream were not JSON: ${d.malformed.map((m) => `line ${m.line}: ${m.text}`).join('; ')}`);
  const unknown = Object.entries(d.unknownTypes);
  if (unknown.length) parts.push(`event types ignored: ${unknown.map(([t, n]) => `${t} ×${n}`).join(', ')}`);
  return parts.join('. ');
}
