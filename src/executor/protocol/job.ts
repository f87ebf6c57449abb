/**
 * job.json: everything a worker needs to run one agent run, written by the
 * daemon before it spawns the worker. The worker never reads the database; if
 * it is not in this file, the run does not know it. Validated with zod, and a
 * bad file is refused naming the field (`task.complexity: Invalid option ...`).
 */
import { join } from 'node:path';
import { z } from 'zod';
import { MaestroError } from '../../core/errors.js';
import { COMPLEXITIES, RUN_KINDS } from '../../core/types.js';
import { MAX_TIMER_MESSAGE, MAX_TIMER_MS } from '../../core/timers.js';
import { readJsonFile, writeJsonAtomic, writeJsonAtomicOffLoop } from './files.js';
import { CLI_TOOL_KINDS, type CliToolKind } from '../../agents/cli/tools.js';
import { promptInScript, promptInScriptSaid } from './promptInScript.js';

export const JOB_FILE = 'job.json';
export const JOB_SCHEMA_VERSION = 1;

const SECOND = 1000;
const MINUTE = 60 * SECOND;

export const DEFAULT_LIMITS = {
  /** Commits on main the task branch lacks before the task needs a human. */
  divergenceCommits: 50,
  /** Files main changed since the branch point before the task needs a human. */
  divergenceFiles: 200,
  maxDiffFiles: 50,
  maxDiffLines: 2000,
  /**
   * The largest file a change may add, or grow an existing file past (bytes). Lines do not count a binary
   * file, and once merged it stays in the repository's history: a build artefact, a dump or an archive an
   * agent left in the worktree would pass the line limit as 0 lines.
   */
  maxFileBytes: 5 * 1024 * 1024,
  /** Review rejections a task version may take before it goes to needs_attention. */
  reviewRounds: 3,
  /**
   * The most subtasks a plan may split a task into. A trial's planner answered 3,000: the plan was accepted,
   * `task show` printed 540 KB and approving it took 51 s. A plan past 100 is a backlog, not a plan.
   */
  maxSubtasks: 100,
  agentTimeoutMs: 30 * MINUTE,
  checkTimeoutMs: 10 * MINUTE,
  /** How long an answer to a clarifying question may take; 0 waits forever. */
  clarifyTimeoutMs: 0,
};

/** A delay some timer waits (a timeout, a poll): at most MAX_TIMER_MS, as a larger one fires after 1 ms. */
const timerMs = () => z.number().int().positive().max(MAX_TIMER_MS, MAX_TIMER_MESSAGE);

/**
 * A model name, as an agent tool gets it after `--model`: never one that starts with "-". A repository's
 * `.maestro/config.json` names models, and `--model --yolo` would have a tool read the second as its own flag (one
 * that lets a read-only review call act).
 */
const modelName = z.string().min(1).refine((name) => !name.startsWith('-'), 'a model name, not an option: it must not start with "-"');

/** The model of each tier (`.maestro/config.json` `models`, a CLI provider's `models`). */
export const modelTiersSchema = z.object({ hard: modelName, medium: modelName, easy: modelName }).partial().strict();

const PERMISSION_MODES = ['default', 'acceptEdits', 'plan', 'bypassPermissions'] as const;

/** codex, gemini, cursor, opencode: the agent CLIs run in their JSONL mode (docs/agents.md). */
function cliProviderSchema<K extends CliToolKind>(kind: K) {
  return z.object({
    kind: z.literal(kind),
    /** The tool's executable (argv[0]); its usual name on PATH when absent. */
    executable: z.string().min(1).optional(),
    /** Model names per tier for this tool; `default` leaves the model to the tool. */
    models: modelTiersSchema.optional(),
    /** Arguments each permission mode adds, replacing the built-in ones. */
    permissions: z.partialRecord(z.enum(PERMISSION_MODES), z.array(z.string().min(1))).optional(),
    extraArgs: z.array(z.string().min(1)).optional(),
    env: z.record(z.string(), z.string()).optional(),
    /** USD per million tokens, for tools that report tokens but no cost. */
    prices: z.record(z.string(), z.object({ inputPerMTok: z.number().nonnegative(), outputPerMTok: z.number().nonnegative() }).strict()).optional(),
  }).strict();
}

/** A provider whose kind is missing or unknown, said without zod's "Invalid discriminator value". */
function providerKindSaid(input: unknown): string {
  const kind = input && typeof input === 'object' ? (input as { kind?: unknown }).kind : undefined;
  const said = kind === undefined ? 'not set' : `${JSON.stringify(kind)} is not a provider kind`;
  return `${said}: one of scripted, command, claude, ${CLI_TOOL_KINDS.join(', ')}`;
}

export const providerConfigSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('scripted'),
    /** Path of the YAML or JSON script (docs/scripted-agent.md). */
    script: z.string({ error: 'a scripted provider needs the path of its YAML or JSON script (docs/scripted-agent.md)' }).min(1),
    /** Optional NDJSON log of every call; also makes "fail N times" counts survive restarts. */
    callLog: z.string().min(1).optional(),
  }).strict(),
  z.object({
    kind: z.literal('command'),
    /** argv; `{model}` and `{prompt}` are replaced in each element. Never run through a shell. */
    command: z.array(z.string().min(1), { error: 'the agent\'s argv as a list, such as ["my-agent","{prompt}"] (it is never run through a shell)' }).min(1),
    promptVia: z.enum(['stdin', 'arg']).default('stdin'),
    env: z.record(z.string(), z.string()).optional(),
  }).strict().superRefine((p, ctx) => {
    // Checked where a provider is saved, and again where a job is read: one stored before this check fails its run, saying why.
    const found = promptInScript(p.command);
    if (found) ctx.addIssue({ code: 'custom', path: ['command', found.at], message: promptInScriptSaid(p.command, found) });
  }),
  z.object({
    kind: z.literal('claude'),
    /** Path to the Claude Code executable; the SDK's bundled one when absent. */
    executable: z.string().min(1).optional(),
    env: z.record(z.string(), z.string()).optional(),
  }).strict(),
  ...CLI_TOOL_KINDS.map((kind) => cliProviderSchema(kind)),
], { error: (issue) => (issue.code === 'invalid_union' ? providerKindSaid(issue.input) : undefined) });
export type ProviderConfig = z.infer<typeof providerConfigSchema>;

export const checkSchema = z.object({
  name: z.string().min(1).regex(/^[A-Za-z0-9_.-]+$/, 'check names are letters, digits, _ . -'),
  /** argv (no shell) or one command line, run by /bin/sh as the project owner wrote it. */
  command: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)], { error: 'a command line (a string) or its argv (a list of strings)' }),
  timeoutMs: timerMs().optional(),
}).strict();
export type CheckConfig = z.infer<typeof checkSchema>;

export const limitsSchema = z.object({
  divergenceCommits: z.number().int().nonnegative(),
  divergenceFiles: z.number().int().nonnegative(),
  maxDiffFiles: z.number().int().positive(),
  maxDiffLines: z.number().int().positive(),
  maxFileBytes: z.number().int().positive(),
  reviewRounds: z.number().int().positive(),
  maxSubtasks: z.number().int().positive(),
  agentTimeoutMs: timerMs(),
  checkTimeoutMs: timerMs(),
  clarifyTimeoutMs: z.number().int().nonnegative(),
}).strict();
export type Limits = z.infer<typeof limitsSchema>;

export const jobSchema = z.object({
  schemaVersion: z.literal(JOB_SCHEMA_VERSION),
  runId: z.string().min(1),
  taskId: z.string().min(1).regex(/^[A-Za-z0-9_-]+$/, 'task ids name branches and folders: letters, digits, _ and -'),
  traceId: z.string().min(1),
  kind: z.enum(RUN_KINDS),
  /** 1 for the first run of this kind on this task version; the daemon counts. */
  attempt: z.number().int().positive().default(1),
  task: z.object({
    title: z.string().min(1),
    description: z.string().default(''),
    complexity: z.enum(COMPLEXITIES),
    version: z.number().int().positive().default(1),
    ownedFiles: z.array(z.string().min(1)).default([]),
    expectedOutput: z.string().nullable().default(null),
    /** Review findings or a human's rejection reason carried into this run's prompt. */
    feedback: z.string().nullable().default(null),
    /** The approved plan, for execute runs of a planned task. */
    plan: z.string().nullable().default(null),
  }).strict(),
  project: z.object({
    id: z.string().min(1),
    /** The main checkout. Only mergeIntoMain ever changes it. */
    repoPath: z.string().min(1),
    baseBranch: z.string().min(1).default('main'),
    /** Worktrees go to `<worktreeRoot>/<taskId>-v<version>`. */
    worktreeRoot: z.string().min(1),
    /** Project knowledge (specs, knowhow) the daemon selected for the prompt. */
    knowledge: z.string().default(''),
  }).strict(),
  provider: providerConfigSchema,
  model: z.object({
    /** Defaults to the task's complexity (hard tasks on the strongest tier). */
    tier: z.enum(COMPLEXITIES).optional(),
    /** Strongest first; the worker resolves it from the tier and env when absent. */
    chain: z.array(z.string().min(1)).min(1).optional(),
  }).strict().default({}),
  /** Tools the agent may use; read-only tools are forced for review runs. */
  allowedTools: z.array(z.string().min(1)).optional(),
  /** Checks to run after the agent; read from `<repo>/.maestro/config.{json,yaml}` when absent. */
  checks: z.array(checkSchema).optional(),
  /** A merge check's starting point: the approved commit the branch holds; the base is merged onto it (pipelines/mergeCheck.ts). */
  mergeFrom: z.string().regex(/^[0-9a-f]{40}$/, 'a full commit id').optional(),
  /**
   * The changes a merge check checks together with its task's (daemon/mergeBatch.ts), in queue order: each merged in
   * turn after it, onto the base, and the checks run once on the chain's tip. Absent or empty: its change alone.
   */
  mergeBatch: z.array(z.object({
    taskId: z.string().min(1),
    title: z.string(),
    branch: z.string().min(1),
    commit: z.string().regex(/^[0-9a-f]{40}$/, 'a full commit id'),
  }).strict()).optional(),
  limits: limitsSchema.partial().default({}),
  /** Review round of this task version (1-based); a reject in the last allowed round needs a human. */
  reviewRound: z.number().int().positive().default(1),
  /** Failures of earlier tries of this task version, newest last; two or more trigger reflect. */
  previousFailures: z.array(z.object({ error: z.string(), log: z.string().default('') }).strict()).default([]),
  heartbeatMs: timerMs().default(5 * SECOND),
  /** How often the worker looks at inbox.json while it waits for a reply. */
  inboxPollMs: timerMs().default(200),
  /** The sandbox the agent and the checks run in (src/lib/sandbox.ts); null: none. */
  sandbox: z.object({
    kind: z.literal('bwrap'),
    hide: z.array(z.string().min(1)),
    readOnly: z.array(z.string().min(1)),
    writable: z.array(z.string().min(1)),
    /** The daemon's answer on scoping abstract sockets (lib/sandbox.ts SocketScope); absent, the worker asks itself. */
    sockets: z.discriminatedUnion('scoped', [
      z.object({ scoped: z.literal(true) }).strict(),
      z.object({ scoped: z.literal(false), reason: z.string().min(1) }).strict(),
    ]).optional(),
    /** Its network (lib/sandboxNet/relay.ts); absent, the host's. */
    network: z.object({
      mode: z.enum(['shared', 'proxied', 'none']),
      allow: z.array(z.string().min(1)),
      /** The host's own proxy, which Maestro's goes through (lib/sandboxNet/upstream.ts). */
      upstream: z.object({ https: z.string().min(1).optional(), http: z.string().min(1).optional(), noProxy: z.array(z.string().min(1)) }).strict().optional(),
    }).strict().optional(),
  }).strict().nullable().default(null),
}).strict().transform((job) => ({ ...job, model: { ...job.model, tier: job.model.tier ?? job.task.complexity } }));

/** What the daemon writes (defaults may be left out). */
export type JobInput = z.input<typeof jobSchema>;
/** What the worker runs (defaults filled in). */
export type Job = z.output<typeof jobSchema>;

const PROVIDER_KINDS = ['scripted', 'command', 'claude', ...CLI_TOOL_KINDS];

export function parseJob(raw: unknown, where = JOB_FILE): Job {
  const kind = (raw as { provider?: { kind?: unknown } } | null)?.provider?.kind;
  if (typeof kind === 'string' && !PROVIDER_KINDS.includes(kind)) {
    throw new MaestroError('UNKNOWN_PROVIDER', `${where}: unknown agent provider "${kind}" (provider.kind); use ${PROVIDER_KINDS.join(', ')}`, { details: { file: where, kind } });
  }
  const parsed = jobSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
  throw new MaestroError('JOB_INVALID', `${where} is not a valid job: ${problems.join('; ')}`, { details: { file: where, problems } });
}

export function readJob(runDir: string): Job {
  const path = join(runDir, JOB_FILE);
  let raw: unknown;
  try {
    raw = readJsonFile(path);
  } catch (err) {
    throw new MaestroError('JOB_INVALID', `cannot read ${path}: ${(err as Error).message}`, { cause: err });
  }
  return parseJob(raw, path);
}

/** Validates and writes job.json atomically; returns the job with defaults filled in. */
export function writeJob(runDir: string, input: JobInput): Job {
  const path = join(runDir, JOB_FILE);
  const job = parseJob(input, path);
  writeJsonAtomic(path, job);
  return job;
}

/**
 * writeJob for the daemon (runStarter.ts): the same file, as durable, before the run's row is stored, its two fsyncs
 * awaited off the event loop. Nothing else writes a new run's folder until its worker is spawned.
 */
export async function writeJobOffLoop(runDir: string, input: JobInput): Promise<Job> {
  const path = join(runDir, JOB_FILE);
  const job = parseJob(input, path);
  await writeJsonAtomicOffLoop(path, job);
  return job;
}

export function branchName(taskId: string, version: number): string {
  return `maestro/${taskId}-v${version}`;
}

export function worktreePath(job: Pick<Job, 'taskId' | 'task' | 'project'>): string {
  return join(job.project.worktreeRoot, `${job.taskId}-v${job.task.version}`);
}
