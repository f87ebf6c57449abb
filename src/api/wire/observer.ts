/**
 * What the observer routes answer (src/api/routes/observer.ts): the session
 * list, one session as the board shows it (src/observer/view.ts) with its
 * exploration graph, and the curation proposals. observer.test.ts checks each
 * against the observer's own type, field for field. Pure (zod only): the web
 * imports these types.
 *
 * The summary, retrieval, write and flow graph parts are the bundle's own
 * (wiki/sessions/<id>/bundle.json, FORMATS §8.3), passed through as read.
 */
import { z } from 'zod';

const epochMs = z.number().describe('milliseconds since the epoch');
const isoTime = z.string().describe('ISO 8601');

const loadStatus = z.enum(['hit', 'miss', 'corrupted', 'expired', 'stale']);
const loadReason = z.enum(['bundle_not_found', 'jsonl_source_missing', 'parse_error', 'schema_or_session_mismatch', 'workspace_mismatch', 'workspace_root_missing', 'jsonl_newer']);

export const bundleLoadSchema = z.strictObject({
  status: loadStatus,
  reason: loadReason.optional(),
  detail: z.string().optional(),
  found: z
    .strictObject({ status: loadStatus, reason: loadReason.optional() })
    .optional()
    .describe('a live session whose bundle was written since it was opened: what it found then (on a first pass, a miss: nothing was cached)'),
});

const intentSchema = z.strictObject({ intentKey: z.string(), nodeTitle: z.string(), phase: z.string() });

/** One row of `GET /api/observer/sessions`. */
export const sessionSummarySchema = z.strictObject({
  sessionId: z.string(),
  isLast: z.boolean().describe('the session the index names as the last one'),
  load: bundleLoadSchema,
  jsonlPath: z.string().nullable(),
  jsonlMtime: epochMs.nullable(),
  bundleUpdatedAt: epochMs.nullable(),
  explorationCount: z.number(),
  intent: intentSchema.nullable(),
});

const tokenUsageSchema = z.strictObject({ input: z.number(), output: z.number(), cacheRead: z.number(), cacheWrite: z.number() });

const persistMetaSchema = z.strictObject({
  should_persist: z.boolean(),
  type: z.enum(['context', 'entity', 'error', 'snippet', 'decision']).optional(),
  slug: z.string().optional(),
  title: z.string().optional(),
  solution_detail: z.string().optional(),
  tags: z.array(z.string()).optional(),
  intent_key: z.string().optional(),
  confidence: z.number().optional(),
});

const flowchartHintSchema = z.strictObject({
  nodeId: z.string(),
  nodeTitle: z.string(),
  parentId: z.string().nullable(),
  branchType: z.enum(['trunk', 'parallel', 'repair', 'merge']),
  importance: z.enum(['high', 'medium', 'low']),
  dropFromChart: z.boolean(),
  intentKey: z.string(),
  titleDelta: z.enum(['idle', 'continue', 'refine', 'pivot', 'blocked', 'done']).optional(),
  titleDeltaNote: z.string().optional(),
});

export const summaryItemSchema = z.strictObject({
  explorationId: z.string(),
  text: z.string(),
  source: z.enum(['ai', 'fallback']),
  status: z.enum(['ready', 'failed']),
  reason: z.string().optional(),
  flowchart: flowchartHintSchema.optional(),
  persistMeta: persistMetaSchema.nullable().optional(),
  savedAt: epochMs,
  continuations: z.number().optional(),
});

export const retrievalRecordSchema = z.strictObject({
  origin: z.literal('retrieved'),
  entryId: z.string(),
  relativePath: z.string(),
  type: z.enum(['context', 'entity', 'summary']),
  slug: z.string(),
  request: z.string(),
  excerpt: z.string(),
  tags: z.array(z.string()),
  score: z.number(),
  matchedKeywords: z.array(z.string()),
  capturedAt: epochMs,
});

export const writeRecordSchema = z.strictObject({
  origin: z.literal('saved'),
  status: z.enum(['saved', 'updated', 'skipped', 'failed']),
  reason: z.string().optional(),
  targetId: z.string().optional(),
  targetPath: z.string().optional(),
  turnCount: z.number().optional(),
  persistMeta: persistMetaSchema.nullable().optional(),
  completedAt: epochMs,
  proposalId: z.string().optional(),
});

export const explorationViewSchema = z.strictObject({
  id: z.string(),
  question: z.string(),
  slashCommands: z.array(z.string()),
  status: z.enum(['running', 'complete', 'interrupted']),
  toolCount: z.number(),
  errorCount: z.number(),
  toolSummary: z.string(),
  files: z.array(z.string()),
  durationMs: z.number().nullable(),
  tokens: z.number().nullable().describe('the total; null when no usage was reported'),
  tokenBreakdown: tokenUsageSchema.nullable(),
  subagents: z.array(z.strictObject({ prompt: z.string(), toolCount: z.number(), errorCount: z.number(), toolSummary: z.string().optional() })),
  activeTool: z.string().nullable(),
  knowledge: retrievalRecordSchema.nullable().optional().describe('absent: not searched yet; null: no prior knowledge'),
  summary: summaryItemSchema.nullable(),
  wiki: writeRecordSchema.nullable().describe("present on an intent's anchor turn only"),
});

const transcriptSchema = z.strictObject({
  lines: z.number(),
  issueCount: z.number(),
  issues: z.array(z.strictObject({ line: z.number(), reason: z.string() })),
  lastPrompt: z.string().nullable(),
  sessionEvents: z.array(z.strictObject({ kind: z.enum(['compact', 'compact-summary', 'stop-hook']), at: epochMs, line: z.number(), text: z.string(), explorationId: z.string().nullable() })),
});

export const flowGraphSchema = z.strictObject({
  nodes: z.array(
    z.strictObject({
      id: z.string(),
      explorationId: z.string(),
      intentKey: z.string(),
      label: z.string(),
      status: z.enum(['running', 'complete', 'interrupted', 'error']),
      startedAt: epochMs,
      endedAt: epochMs.optional(),
      summaryPreview: z.string(),
      metaBadges: z.strictObject({ tools: z.number(), errors: z.number(), wiki: z.enum(['saved', 'updated', 'skipped', 'failed', 'pending', 'none']) }),
    }),
  ),
  edges: z.array(z.strictObject({ from: z.string(), to: z.string(), relationship: z.enum(['main', 'repair', 'side', 'merge']) })),
  focusNodeId: z.string().optional(),
  updatedAt: epochMs,
});

/** The session as every front end shows it (src/observer/view.ts). */
export const sessionViewSchema = z.strictObject({
  sessionId: z.string(),
  jsonlPath: z.string(),
  workspaceRoot: z.string(),
  mode: z.enum(['live', 'restore']),
  load: bundleLoadSchema,
  hold: z.strictObject({ reason: z.string(), detail: z.string() }).nullable().describe('why this session writes nothing; null when it writes'),
  intent: intentSchema.nullable(),
  explorations: z.array(explorationViewSchema),
  transcript: transcriptSchema.nullable().describe('null in restore mode (the bundle only)'),
  tokens: z.strictObject({ total: z.number(), input: z.number(), output: z.number() }),
  updatedAt: epochMs,
});

export const sessionListResponse = z.strictObject({ sessions: z.array(sessionSummarySchema).describe('newest bundle first') });

/** `GET /api/observer/sessions/:id`: the restore view with its exploration graph, or, without a readable bundle, why not. */
export const observerSessionResponse = z.union([
  sessionViewSchema.extend({ flow: flowGraphSchema.nullable() }),
  z.strictObject({ sessionId: z.string(), load: bundleLoadSchema, session: z.null().describe('no readable bundle') }),
]);

/** A curation proposal (src/observer/curation/proposals.ts). */
export const proposalSchema = z.strictObject({
  schemaVersion: z.literal(1),
  id: z.string(),
  status: z.enum(['open', 'accepted', 'dismissed']),
  kind: z.enum(['update', 'merge']),
  reason: z.string().describe('no_agent, open_audit, dedup_new_fact'),
  targetId: z.string(),
  targetPath: z.string(),
  targetRequest: z.string(),
  filedAt: isoTime,
  source: z.strictObject({ sessionId: z.string(), explorationId: z.string() }),
  intentKey: z.string().optional(),
  newFacts: z.array(z.string()),
  draft: z.strictObject({ solution: z.string(), tags: z.array(z.string()).optional(), confidence: z.number().optional() }),
  closedAt: isoTime.optional(),
  note: z.string().optional(),
});

export const proposalsResponse = z.strictObject({
  open: z.array(proposalSchema),
  closed: z.array(proposalSchema).describe('the last closed ones, newest first'),
  problems: z.array(z.strictObject({ file: z.string(), reason: z.string() })).describe('proposal files that could not be read'),
});
export const proposalDismissResponse = z.strictObject({ proposal: proposalSchema });
export const proposalAcceptResponse = z.strictObject({ proposal: proposalSchema, entry: z.strictObject({ id: z.string(), relativePath: z.string() }).describe('the wiki entry it updated') });

type Out<S extends z.ZodType> = z.output<S>;
export type SessionSummary = Out<typeof sessionSummarySchema>;
export type SessionView = Out<typeof sessionViewSchema>;
export type ExplorationView = Out<typeof explorationViewSchema>;
export type FlowGraph = Out<typeof flowGraphSchema>;
export type SessionList = Out<typeof sessionListResponse>;
export type ObserverSessionResponse = Out<typeof observerSessionResponse>;
export type Proposal = Out<typeof proposalSchema>;
export type ProposalsResponse = Out<typeof proposalsResponse>;
export type ProposalAccept = Out<typeof proposalAcceptResponse>;
export type ProposalDismiss = Out<typeof proposalDismissResponse>;
