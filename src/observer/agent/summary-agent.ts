/**
 * The summary model through the agent provider: one read-only agent call per
 * finished exploration. The prompt carries the ExplorationDigest and asks for
 * one JSON object — the summary text, the structured persist metadata and the
 * flowchart hint (FORMATS §8.3, seed 003). The answer is validated with zod
 * and mapped to the one SummaryItem shape; anything unusable throws
 * AGENT_ANSWER_INVALID, which the SummaryOrchestrator turns into the
 * deterministic summary with the reason kept.
 */
import { z } from 'zod';
import { clipOutsideMarkers as clip, redactSecrets } from '../../core/redact.js';
import type { FlowchartHint, SummaryItem, WikiPersistMeta } from '../bundle/types.js';
import { INTENT_KEYS, normalizeIntentKey, normalizeTitleDelta } from '../curation/intent.js';
import type { ExplorationDigest } from '../summary/digest.js';
import type { SummarizeFn } from '../summary/orchestrator.js';
import { slugify } from '../text.js';
import { askForJson, type ObserverAgentOptions } from './json.js';

const PERSIST_TYPES = ['context', 'entity', 'error', 'snippet', 'decision'] as const;
const TITLE_DELTAS = ['idle', 'continue', 'refine', 'pivot', 'blocked', 'done'] as const;

/** What the model must answer (snake_case, as the notes' summary model writes it). */
export const summaryAnswerSchema = z.object({
  summary: z.string().trim().min(1, 'the summary is empty').max(8_000),
  persist_meta: z.object({
    should_persist: z.boolean(),
    type: z.enum(PERSIST_TYPES).optional(),
    slug: z.string().max(200).optional(),
    title: z.string().max(200).optional(),
    solution_detail: z.string().max(8_000).optional(),
    tags: z.array(z.string().min(1).max(80)).max(20).optional(),
    intent_key: z.string().max(80).optional(),
    confidence: z.number().min(0).max(1).optional(),
  }),
  flowchart: z.object({
    node_title: z.string().trim().min(1, 'the node title is empty').max(200),
    intent_key: z.string().min(1).max(80),
    title_delta: z.string().max(20).optional(),
    title_delta_note: z.string().max(200).optional(),
    parent_id: z.string().max(200).nullable().optional(),
    branch_type: z.enum(['trunk', 'parallel', 'repair', 'merge']).optional(),
    importance: z.enum(['high', 'medium', 'low']).optional(),
    drop_from_chart: z.boolean().optional(),
  }),
});
export type SummaryAnswer = z.infer<typeof summaryAnswerSchema>;

export function summaryPrompt(d: ExplorationDigest): string {
  const lines = [
    'You summarise one finished exploration of an interactive Claude Code session for a project wiki. Do not change any file.',
    'Answer with one JSON object and nothing else:',
    '{"summary": "2-5 sentences: what was asked, what was done, what was found or changed",',
    ' "persist_meta": {"should_persist": true|false, "type": "context|entity|error|snippet|decision", "slug": "kebab-case", "title": "short title",',
    '   "solution_detail": "the reusable answer or fix, if any", "tags": ["…"], "intent_key": "…", "confidence": 0.0-1.0},',
    ' "flowchart": {"node_title": "≤ 8 words naming the intent", "intent_key": "…", "title_delta": "continue|refine|pivot|blocked|done",',
    '   "title_delta_note": "≤ 40 chars", "branch_type": "trunk|parallel|repair|merge", "importance": "high|medium|low", "drop_from_chart": false}}',
    `intent_key is one of: ${INTENT_KEYS.join(', ')}.`,
    'title_delta compares this exploration with the previous intent: continue (same work), refine (same intent, narrower), pivot (new intent).',
    'should_persist is true only when the exploration found something worth reusing in a later session.',
    '',
    `Session ${d.sessionId}, exploration ${d.explorationId} (${d.status}${d.durationMs !== null ? `, ${Math.round(d.durationMs / 1000)} s` : ''}).`,
    `Previous intent: ${d.previousHint ? `${d.previousHint.nodeTitle} [${d.previousHint.intentKey}]` : '(none)'}`,
    `Question: ${clip(d.question, 2_000)}`,
  ];
  if (d.slashCommands.length) lines.push(`Slash commands: ${d.slashCommands.join(' ')}`);
  if (d.tools.length) lines.push(`Tools (${d.tools.length}):`, ...d.tools.slice(0, 40).map((t) => `- ${t.name} [${t.phase}, ${t.status}] ${clip(t.label, 160)}`));
  if (d.files.length) lines.push(`Files: ${d.files.slice(0, 30).join(', ')}`);
  if (d.errors.length) lines.push('Errors:', ...d.errors.slice(0, 10).map((e) => `- ${clip(e, 200)}`));
  if (d.responses.length) lines.push('Last answers:', ...d.responses.map((r) => clip(r, 1_500)));
  return lines.join('\n');
}

/** Maps a validated answer to the SummaryItem every part of the observer uses. */
export function summaryItemFromAnswer(a: SummaryAnswer, d: ExplorationDigest, now: number): SummaryItem {
  const f = a.flowchart;
  const delta = normalizeTitleDelta(f.title_delta && (TITLE_DELTAS as readonly string[]).includes(f.title_delta) ? f.title_delta : 'continue');
  const flowchart: FlowchartHint = {
    nodeId: d.explorationId,
    // Redacted before the cut: a key cut short no longer looks like one, and would be kept.
    nodeTitle: clip(redactSecrets(f.node_title), 80),
    parentId: f.parent_id ?? d.previousHint?.nodeId ?? null,
    branchType: f.branch_type ?? 'trunk',
    importance: f.importance ?? 'medium',
    dropFromChart: f.drop_from_chart ?? false,
    intentKey: normalizeIntentKey(f.intent_key),
    ...(delta ? { titleDelta: delta } : {}),
    ...(f.title_delta_note ? { titleDeltaNote: clip(redactSecrets(f.title_delta_note), 40) } : {}),
  };
  const m = a.persist_meta;
  const slug = m.slug ? slugify(m.slug, 120) : '';
  const persistMeta: WikiPersistMeta = {
    should_persist: m.should_persist,
    ...(m.type ? { type: m.type } : {}),
    ...(slug ? { slug } : {}),
    ...(m.title ? { title: m.title } : {}),
    ...(m.solution_detail?.trim() ? { solution_detail: m.solution_detail.trim() } : {}),
    ...(m.tags ? { tags: [...new Set(m.tags)] } : {}),
    intent_key: normalizeIntentKey(m.intent_key ?? f.intent_key),
    ...(m.confidence !== undefined ? { confidence: m.confidence } : {}),
  };
  return { explorationId: d.explorationId, text: a.summary.trim(), source: 'ai', status: 'ready', flowchart, persistMeta, savedAt: now };
}

export interface AgentSummarizerOptions extends ObserverAgentOptions {
  now?: () => number;
}

/** The `summarize` seam backed by the agent provider (role `summarize`, read-only tools). */
export function createAgentSummarizer(o: AgentSummarizerOptions): SummarizeFn {
  const now = o.now ?? Date.now;
  return async (digest) => {
    const answer = await askForJson(o, {
      role: 'summarize',
      taskTitle: `summary ${digest.sessionId}:${digest.explorationId}`,
      prompt: summaryPrompt(digest),
      whenAsked: 'No one can answer here; summarise from what you have.',
      what: `summary of ${digest.explorationId}`,
    }, summaryAnswerSchema);
    return summaryItemFromAnswer(answer, digest, now());
  };
}
