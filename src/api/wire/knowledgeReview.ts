/**
 * What the knowledge review, promotion and audit routes answer
 * (src/api/routes/knowledgeReview.ts, seed 000 §8–9). snake_case, as the
 * library writes its receipts and as `maestro knowledge review --json` prints
 * them. knowledge.test.ts checks each against the library's type. Pure (zod
 * only): the web imports these types.
 */
import { z } from 'zod';

const isoTime = z.string().describe('ISO 8601');
const freshness = z.enum(['missing', 'stale', 'fresh']);
const relation = z.enum(['exact_duplicate', 'semantic_duplicate', 'extends', 'related', 'potential_conflict', 'supersede_candidate']);
const disposition = z.enum(['unique', ...relation.options]);
const eligibility = z.enum(['eligible', 'review_required', 'suppressed']);

/** One corpus document a candidate was matched against (src/knowledge/lifecycle/reconcile/matcher.ts). */
export const matchSchema = z.strictObject({
  knowledge_id: z.string(),
  target: z.string(),
  title: z.string(),
  relation,
  scores: z.strictObject({ lexical: z.number(), semantic: z.number(), title: z.number(), relation: z.number(), stance: z.number(), composite: z.number() }),
  novelty: z.number(),
  evidence: z.array(z.string()),
  target_content_hash: z.string(),
  source_path: z.string(),
  source_line: z.number().nullable(),
});

const resolutionSchema = z.strictObject({ status: z.enum(['automatic', 'confirmed']), reason: z.string(), resolved_at: isoTime }).nullable();

export const reviewCandidateSchema = z.strictObject({
  candidate_id: z.string(),
  source_run: z.string().describe('the run whose ledger holds it, or `session`'),
  target: z.string(),
  action: z.string(),
  title: z.string().describe('a label only: the agent chose it, or it is the first 120 characters of a report item'),
  content: z.string().describe('the whole text a promote writes: what the person approves'),
  category: z.string().nullable().describe("a spec candidate's category (the file it lands in); null: learning"),
  status: z.string().describe('draft (a report not staged yet), pending, promoting, promoted, rejected'),
  source_kind: z.string(),
  occurrences: z.number(),
  first_recorded_at: isoTime.nullable(),
  corroboration: z.number().describe('how many runs of the session staged it'),
  receipt: freshness,
  disposition: disposition.nullable(),
  promotion_eligibility: eligibility.nullable(),
  canonical_id: z.string().nullable(),
  canonical_status: z.enum(['active', 'inactive']).nullable().describe('the canonical target now: an audit may have deprecated it since'),
  matches: z.array(matchSchema).describe('up to 3, of different relations and files'),
  resolution: resolutionSchema,
  promote_command: z.string().nullable().describe('the CLI command to promote it, when it may be (sealing its run first when the run is not sealed yet)'),
});

/** `GET /api/knowledge/review/:sessionId` and `POST …/reconcile`: one session's review. */
/** The session's task version that a newer one replaced, as the task store says it (src/core/supersededVersion.ts). */
export const supersededVersionSchema = z.strictObject({
  task_id: z.string(),
  version: z.number().describe("the session's task version"),
  cause: z.enum(['rejected', 'retried']).describe('rejected at a gate, or retried from the current main'),
  gate: z.string().nullable().describe('the gate it was rejected at: plan_review, spec_review, exec_review'),
  reason: z.string(),
  who: z.string(),
  at: isoTime,
  superseded_by: z.strictObject({ task_id: z.string(), version: z.number(), session_id: z.string() }),
});

/**
 * `GET /api/tasks/standing?ids=`: where tasks stand, for their knowledge sessions (the CLI's `knowledge review` and
 * `session list`, which read the session folders themselves and ask the daemon only what the store knows).
 */
export const taskStandingResponse = z.strictObject({
  tasks: z
    .array(z.strictObject({ id: z.string(), status: z.string().describe('the task status'), superseded: supersededVersionSchema.nullable().describe('as a review of its session says it') }))
    .describe('each task among ids that the store holds (unknown ids are left out)'),
});

export const reviewResponse = z.strictObject({
  schema: z.literal('knowledge-review/1.0'),
  session_id: z.string(),
  superseded: supersededVersionSchema.nullable().describe("null: the task's current version (or no task's session); else its candidates come from a version a person rejected or retried, listed after current ones"),
  sources: z.array(z.strictObject({ run_id: z.string(), receipt: freshness, reasons: z.array(z.string()), error: z.string().optional() })),
  candidates: z.array(reviewCandidateSchema),
  triage: z.array(z.strictObject({ candidate_id: z.string(), corroboration: z.number(), first_recorded_at: isoTime.nullable() })),
  input_totals_by_source: z.record(z.string(), z.number()),
  inputs: z.array(z.strictObject({ run_id: z.string(), knowledge_id: z.string(), signal: z.string(), source: z.string(), count: z.number(), evidence: z.array(z.string()) })),
});

/** The documented error shape's inner object, as a session of the queue whose files are unreadable carries it. */
const errorObject = z.strictObject({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()).optional() });

export const reviewQueueSessionSchema = z.strictObject({
  session_id: z.string(),
  objective: z.string(),
  status: z.string(),
  review: reviewResponse.nullable().describe('null when the session could not be read'),
  error: errorObject.optional().describe('why the review could not be read, as the API would answer it'),
});

/** A folder under `.workflow/sessions/` whose session.json does not read: not in the queue, and why (as `maestro session list` says). */
export const unreadableSessionSchema = z.strictObject({
  session_id: z.string().describe('the folder name'),
  file: z.string().describe('its session.json'),
  error: z.string().describe('what is wrong with it, naming the file: missing, not valid JSON, not an object, a folder name that is not a session id'),
});

/** `GET /api/knowledge/review`: the review queue, every session of the project that reads, and the folders that do not. */
export const reviewQueueResponse = z.strictObject({ projectId: z.string(), sessions: z.array(reviewQueueSessionSchema), unreadable: z.array(unreadableSessionSchema) });

export const resolutionResultSchema = z.strictObject({
  schema: z.literal('knowledge-resolution-result/1.0'),
  candidate_id: z.string(),
  disposition,
  promotion_eligibility: eligibility,
  canonical_id: z.string().nullable(),
  status: z.string(),
});
/** `POST …/resolve`: the recorded decision and the session's review after it. */
export const resolveResponse = z.strictObject({ resolution: resolutionResultSchema, review: reviewResponse });

/** `POST …/promote` (src/knowledge/lifecycle/promote/promote.ts). */
export const promotionResponse = z.strictObject({
  schema: z.literal('knowledge-promotion-result/1.0'),
  session_id: z.string(),
  promoted: z.array(z.strictObject({ candidate_id: z.string(), target: z.string(), promoted_id: z.string(), outcome: z.enum(['created', 'reaffirmed']), supersedes: z.string().nullable() })),
  already_promoted: z.array(z.strictObject({ candidate_id: z.string(), promoted_id: z.string().nullable() })),
  skipped_observed: z.array(z.string()),
  skipped_review_required: z.array(z.string()),
  skipped_suppressed: z.array(z.string()),
  skipped_blocked: z.array(z.strictObject({ candidate_id: z.string(), reason: z.string() })),
  warnings: z.array(z.string()),
  commit: z
    .strictObject({
      sha: z.string().nullable().describe('the commit holding the files the promotion wrote, on the base branch; null when nothing was committed'),
      files: z.array(z.string()).describe('the knowledge files in that commit'),
      uncommitted: z.array(z.string()).describe('knowledge files the promotion wrote and left uncommitted'),
      why: z.string().nullable().describe('why those were left uncommitted'),
    })
    .optional()
    .describe("a promotion in a project's own checkout: what the daemon committed there (a shared remote's is pushed; the CLI commits nothing)"),
});

export const auditFindingSchema = z.strictObject({
  id: z.string(),
  store: z.enum(['spec', 'knowhow', 'pipeline', 'usage']),
  priority: z.enum(['P0', 'P1', 'P2']),
  subtype: z.string(),
  target: z.string(),
  evidence: z.string(),
  recommended_action: z.enum(['observe', 'review', 'deprecate']),
});

export const pruneActionSchema = z.strictObject({
  id: z.string(),
  store: z.enum(['spec', 'knowhow']),
  action: z.enum(['deprecate', 'supersede']),
  target_id: z.string(),
  target_file: z.string(),
  successor_id: z.string(),
  successor_file: z.string(),
  reason: z.enum(['unsynchronized-supersession', 'exact-duplicate']),
});

/** `GET /api/knowledge/audit` (src/knowledge/lifecycle/audit/audit.ts): read-only; `prune_plan` only with `prune=true`. */
export const auditResponse = z.strictObject({
  schema: z.literal('knowledge-audit/1.0'),
  scope: z.string(),
  generated_at: isoTime,
  spec_health: z.strictObject({ total: z.number(), active: z.number(), deprecated: z.number(), findings: z.number() }),
  knowhow: z.strictObject({ total: z.number(), active: z.number(), deprecated: z.number(), invalid: z.number() }),
  usage: z.strictObject({ consumed_total: z.number(), distinct: z.number(), top10_share: z.number(), gini: z.number() }),
  pipeline: z.strictObject({ sessions: z.number(), ledgers: z.number(), pending_observed: z.number(), pending_corroborated: z.number(), promoted: z.number() }),
  findings: z.array(auditFindingSchema),
  prune_plan: z.array(pruneActionSchema).optional(),
  applied: z.strictObject({ count: z.number(), backup_dir: z.string().nullable() }),
  safety: z.strictObject({ usage_only_never_pruned: z.literal(true), physical_delete: z.literal(false), apply_requires_prune: z.literal(true) }),
});

type Out<S extends z.ZodType> = z.output<S>;
export type Match = Out<typeof matchSchema>;
export type ReviewCandidate = Out<typeof reviewCandidateSchema>;
export type ReviewResult = Out<typeof reviewResponse>;
export type ReviewQueueSession = Out<typeof reviewQueueSessionSchema>;
export type ReviewQueue = Out<typeof reviewQueueResponse>;
export type ResolutionResult = Out<typeof resolutionResultSchema>;
export type ResolveResponse = Out<typeof resolveResponse>;
export type PromotionResult = Out<typeof promotionResponse>;
export type AuditFinding = Out<typeof auditFindingSchema>;
export type AuditResult = Out<typeof auditResponse>;
export type TaskStanding = Out<typeof taskStandingResponse>;
