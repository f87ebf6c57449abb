/**
 * `wiki/sessions/<id>/bundle.json` (FORMATS §8.3, schemaVersion 1): the one
 * derived aggregate per session. SummaryItem is the single summary shape that
 * travels from cache or model to the display and to the wiki.
 */
import type { EntryType } from '../../knowledge/format/wiki/layout.js';

export const BUNDLE_SCHEMA_VERSION = 1;

export type TitleDelta = 'idle' | 'continue' | 'refine' | 'pivot' | 'blocked' | 'done';
export type BranchType = 'trunk' | 'parallel' | 'repair' | 'merge';

export interface FlowchartHint {
  nodeId: string;
  nodeTitle: string;
  parentId: string | null;
  branchType: BranchType;
  importance: 'high' | 'medium' | 'low';
  dropFromChart: boolean;
  intentKey: string;
  titleDelta?: TitleDelta;
  titleDeltaNote?: string;
}

/** What the summary model says about persisting (snake_case, as the model writes it). */
export interface WikiPersistMeta {
  should_persist: boolean;
  type?: 'context' | 'entity' | 'error' | 'snippet' | 'decision';
  slug?: string;
  title?: string;
  solution_detail?: string;
  tags?: string[];
  intent_key?: string;
  confidence?: number;
}

export interface SummaryItem {
  explorationId: string;
  text: string;
  source: 'ai' | 'fallback';
  status: 'ready' | 'failed';
  reason?: string;
  flowchart?: FlowchartHint;
  persistMeta?: WikiPersistMeta | null;
  savedAt: number;
  /** How many times the turn had resumed when this was made (Maestro's own key): a later resume makes it stale. */
  continuations?: number;
}

export interface RetrievalRecord {
  origin: 'retrieved';
  entryId: string;
  relativePath: string;
  type: EntryType;
  slug: string;
  request: string;
  excerpt: string;
  tags: string[];
  score: number;
  matchedKeywords: string[];
  capturedAt: number;
}

export type WriteStatus = 'saved' | 'updated' | 'skipped' | 'failed';

export interface WriteRecord {
  origin: 'saved';
  status: WriteStatus;
  reason?: string;
  targetId?: string;
  targetPath?: string;
  turnCount?: number;
  persistMeta?: WikiPersistMeta | null;
  completedAt: number;
  /** A proposal filed for a person instead of an edit (Maestro's own key; curation/proposals.ts). */
  proposalId?: string;
}

export interface ExplorationMeta {
  status: 'complete' | 'interrupted';
  toolCount: number;
  errorCount: number;
  toolSummary?: string;
  /** input + output + cache tokens, as GUI-Anything stores it; absent when the exploration reported no usage. */
  tokens?: number;
  /** The same tokens by kind (Maestro's own key; GUI-Anything ignores it); absent with tokens. */
  tokenBreakdown?: TokenUsage;
  files?: string[];
  /** endedAt − startedAt, only when positive. */
  durationMs?: number;
  /** In-file subagent runs of this exploration (Maestro's own key), absent when none. */
  subagents?: Array<{ prompt: string; toolCount: number; errorCount: number }>;
}

export interface TokenUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

export interface BundleExploration {
  explorationId: string;
  question: string;
  meta?: ExplorationMeta;
  summary?: SummaryItem;
  /** absent = not searched yet; null = searched, no hit; object = the hit. */
  retrieval?: RetrievalRecord | null;
  write?: WriteRecord;
}

export interface IntentHistoryItem {
  explorationId: string;
  at: number;
  intentKey: string;
  nodeTitle: string;
  titleDelta: TitleDelta;
  titleDeltaNote?: string;
}

export interface SessionIntentState {
  sessionId: string;
  revision: number;
  intentKey: string;
  nodeTitle: string;
  parentIntentKey: string | null;
  phase: 'idle' | 'active' | 'blocked' | 'done';
  history: IntentHistoryItem[];
  updatedAt: number;
}

export interface FlowNode {
  id: string;
  explorationId: string;
  intentKey: string;
  label: string;
  status: 'running' | 'complete' | 'interrupted' | 'error';
  startedAt: number;
  endedAt?: number;
  summaryPreview: string;
  metaBadges: { tools: number; errors: number; wiki: 'saved' | 'updated' | 'skipped' | 'failed' | 'pending' | 'none' };
}

export interface FlowGraph {
  nodes: FlowNode[];
  edges: Array<{ from: string; to: string; relationship: 'main' | 'repair' | 'side' | 'merge' }>;
  focusNodeId?: string;
  updatedAt: number;
}

export interface GraphPatch {
  op: 'merge_intents' | 'rename_intent' | 'reparent_intent' | 'drop_intent';
  targetIntentKey?: string;
  sourceIntentKeys?: string[];
  newTitle?: string;
  newParentIntentKey?: string;
  reason: string;
  confidence: number;
}

export interface IntentBucket {
  intentKey: string;
  nodeTitle: string;
  explorationIds: string[];
  curatedAt?: number;
  anchorExplorationId?: string;
  persistResult?: { status: WriteStatus; reason?: string; id: string; path?: string };
}

/** Written snake_case (the real writers' shape); readers accept camelCase too. */
export interface EvidenceEntry {
  explorationId: string;
  schema_version?: 1;
  saved_at?: string;
  request: string;
  summary: string;
  result: 'success' | 'failure' | 'abandoned';
  duration: number;
  tokens: number;
  source?: { session_id: string; exploration_id: string };
  commands: string[];
  files: string[];
  persist_meta?: WikiPersistMeta | null;
  nodes: Array<{ type: string; label: string; status: string }>;
}

export interface SessionBundle {
  schemaVersion: 1;
  meta: { sessionId: string; workspaceRoot: string; jsonlPath: string; jsonlMtime: number; updatedAt: number };
  session: {
    intent: SessionIntentState | null;
    flow: { revision: number; fingerprint: string; flowGraph: FlowGraph | null; flowchartHints: Record<string, FlowchartHint>; graphPatchLedger: GraphPatch[] };
  };
  curation: { openIntentKey: string | null; buckets: Record<string, IntentBucket>; evidence: Record<string, EvidenceEntry> };
  explorations: Record<string, BundleExploration>;
}

export function createEmptyBundle(meta: { sessionId: string; workspaceRoot: string; jsonlPath: string; jsonlMtime: number }, now: number): SessionBundle {
  return {
    schemaVersion: BUNDLE_SCHEMA_VERSION,
    meta: { ...meta, updatedAt: now },
    session: { intent: null, flow: { revision: 0, fingerprint: '', flowGraph: null, flowchartHints: {}, graphPatchLedger: [] } },
    curation: { openIntentKey: null, buckets: {}, evidence: {} },
    explorations: {},
  };
}
