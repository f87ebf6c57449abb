/**
 * Input schemas shared by the store, the API and the CLI: one definition of
 * what a valid task or project is. Pure (zod only).
 */
import { z } from 'zod';
import { MaestroError } from './errors.js';
import { COMPLEXITIES, DECISIONS, GATES, TASK_SCOPES, TASK_TYPES } from './types.js';
import { CONTROL, repoPathProblem } from './textRules.js';

export { CONTROL };

const id = z.string().min(1).max(200);
/** A UTF-16 surrogate without its pair (code units: no `u` flag): no character, and UTF-8 (a file, the database) keeps U+FFFD in its place. */
export const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** What is wrong with one line of text from outside (who acted), or null: a control character (an escape sequence colours the terminal that prints it) or a lone surrogate. */
export function oneLineProblem(value: string): string | null {
  if (CONTROL.test(value)) return 'must be one line without control characters (NUL, line breaks, tabs, escapes)';
  if (LONE_SURROGATE.test(value)) return 'holds a lone UTF-16 surrogate, which is no character; send valid Unicode text';
  return null;
}

/** Who the auto-approver says approved (src/daemon/autoApprove.ts). */
export const AUTO_APPROVER = 'auto-approve';

/**
 * The names the daemon signs its own decisions with: the auto-approver's, and "auto", which reads as the same. A
 * client's approval under one would show as the daemon's in `task show` and on the board. Compared in lower case,
 * with spaces and underscores read as hyphens ("Auto Approve" is the same name).
 */
const DAEMON_WHO = new Set([AUTO_APPROVER, 'auto']);

/**
 * Who acted (a gate, a cancel, a project registered, archived or restored), as the approvals list, the events and the
 * board show it: one line, no escape sequence for the terminal that prints it, not a name the daemon signs with.
 * The one schema every route's `who` uses.
 */
export const whoSchema = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .superRefine((w, ctx) => {
    const problem = oneLineProblem(w);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
    if (DAEMON_WHO.has(w.toLowerCase().replace(/[\s_]+/g, '-'))) {
      ctx.addIssue({ code: 'custom', message: `"${w}" is the name the daemon signs its automatic approvals with; name the person or tool that decides (or leave who out: "human")` });
    }
  })
  .default('human');

/** A path of a task's ownedFiles (textRules.ts repoPathProblem, which the CLI checks with too). */
const relPath = z.string().superRefine((p, ctx) => {
  const problem = repoPathProblem(p);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

export const projectInputSchema = z
  .object({
    name: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .regex(/^[^\s/\\][^/\\]*$/, 'must not contain slashes or start with a space')
      // One line, as a task title: a line break or an escape sequence in a name broke `project list` and coloured the terminal.
      .refine((n) => !CONTROL.test(n), 'must be one line without control characters (NUL, line breaks, tabs, escapes)')
      // Projects are named by id or name: a name shaped like an id could hide another project.
      .refine((n) => !/^p_[0-9a-f]{16}$/.test(n), 'must not look like a project id (p_ and 16 hex digits)'),
    repoPath: z.string().min(1).max(4096),
    config: z.record(z.string(), z.unknown()).default({}),
  })
  .strict();
export type ProjectInput = z.input<typeof projectInputSchema>;

/** The longest plan a task holds: one a person writes, and a planner's answer (planParse.ts). */
export const MAX_PLAN_CHARS = 1_000_000;

/** What a person may set on a task, without defaults: an edit changes only the fields it names. A planner's subtasks are held to the same. */
export const taskFields = {
  // One line of text: a line break or an escape sequence in a title broke `task list` and coloured the terminal.
  title: z
    .string()
    .trim()
    .min(1)
    .max(500)
    .refine((t) => !CONTROL.test(t), 'must be one line without control characters (NUL, line breaks, tabs, escapes)'),
  complexity: z.enum(COMPLEXITIES),
  priority: z.union([z.literal(0), z.literal(1), z.literal(2)], { error: 'must be 0, 1 or 2 (0 goes first)' }),
  deps: z.array(id).max(500),
  plan: z.string().max(MAX_PLAN_CHARS).nullable(),
  spec: z.string().max(1_000_000).nullable(),
  taskType: z.enum(TASK_TYPES).nullable(),
  scope: z.enum(TASK_SCOPES).nullable(),
  ownedFiles: z.array(relPath).max(1000),
  expectedOutput: z.string().max(10_000).nullable(),
};

export const taskInputSchema = z
  .object({
    projectId: id,
    title: taskFields.title,
    complexity: taskFields.complexity.default('medium'),
    priority: taskFields.priority.default(1),
    deps: taskFields.deps.default([]),
    parentId: id.nullable().default(null),
    plan: taskFields.plan.default(null),
    spec: taskFields.spec.default(null),
    taskType: taskFields.taskType.default(null),
    scope: taskFields.scope.default(null),
    ownedFiles: taskFields.ownedFiles.default([]),
    expectedOutput: taskFields.expectedOutput.default(null),
  })
  .strict();
export type TaskInput = z.input<typeof taskInputSchema>;
export type ValidTaskInput = z.output<typeof taskInputSchema>;

/** Fields a person may edit while no run is in flight; a field left out keeps its value (no defaults here). */
export const taskEditSchema = z.object(taskFields).partial().strict();
export type TaskEdit = z.input<typeof taskEditSchema>;

export const gateDecisionSchema = z
  .object({
    gate: z.enum(GATES),
    decision: z.enum(DECISIONS),
    reason: z.string().trim().max(10_000).nullable().default(null),
    who: whoSchema,
  })
  .strict()
  .refine((d) => d.decision === 'approve' || (d.reason !== null && d.reason.length > 0), { message: 'a rejection needs a reason', path: ['reason'] });

/** Parses with a schema; a failure is a BAD_INPUT MaestroError naming the field. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  // An issue of the whole value (an unknown key, say) has no field to name: `what` says which value it is.
  const issues = parsed.error.issues.map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message));
  throw new MaestroError('BAD_INPUT', `Invalid ${what}: ${issues.join('; ')}`, { details: { issues: parsed.error.issues.map((i) => ({ path: i.path, message: i.message })) } });
}
