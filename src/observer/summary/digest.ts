/**
 * What a summary is made from: an ExplorationDigest (the injected model
 * summarizer receives exactly this) and the deterministic summary used when no
 * model is configured or the model fails.
 */
import { clipOutsideMarkers, cutOutsideMarkers } from '../../core/redact.js';
import type { FlowchartHint, SummaryItem, WikiPersistMeta } from '../bundle/types.js';
import { classifyIntent } from '../curation/intent.js';
import { slugify } from '../text.js';
import type { Exploration } from '../transcript/types.js';

export interface ExplorationDigest {
  sessionId: string;
  explorationId: string;
  question: string;
  slashCommands: string[];
  status: Exploration['status'];
  tools: Array<{ name: string; phase: string; label: string; status: string }>;
  commands: string[];
  files: string[];
  /** The last few assistant responses, capped. */
  responses: string[];
  errors: string[];
  tokens: Exploration['tokens'];
  durationMs: number | null;
  /** The previous exploration's hint, so a model can say continue / refine / pivot. */
  previousHint: FlowchartHint | null;
}

export function buildExplorationDigest(sessionId: string, e: Exploration, previousHint: FlowchartHint | null): ExplorationDigest {
  const tools = e.nodes.filter((n) => n.type === 'tool');
  return {
    sessionId,
    explorationId: e.id,
    question: e.question,
    slashCommands: e.slashCommands,
    status: e.status,
    tools: tools.map((n) => ({ name: n.name ?? 'tool', phase: n.phase ?? 'explore', label: n.label, status: n.status })),
    commands: tools.map((n) => n.command).filter((c): c is string => Boolean(c)),
    files: e.files.slice(0, 50),
    responses: e.nodes.filter((n) => n.type === 'response').slice(-3).map((n) => n.text ?? n.label),
    errors: e.nodes.filter((n) => n.type === 'error' || n.status === 'error').map((n) => n.label),
    tokens: e.tokens,
    durationMs: durationOf(e) ?? null,
    previousHint,
  };
}

/**
 * `Name×n` of the four most used tools, joined with ` · `. Ties keep the order
 * in which the tools were first used (a stable sort on the count alone), as
 * GUI-Anything's card meta does, so both write the same string.
 */
export function toolSummary(tools: ReadonlyArray<{ name: string }>): string {
  const counts = new Map<string, number>();
  for (const t of tools) counts.set(t.name, (counts.get(t.name) ?? 0) + 1);
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 4)
    .map(([n, c]) => `${n}×${c}`)
    .join(' · ');
}

/** endedAt − startedAt, only when it is positive: clocks without timestamps never give a negative duration. */
export function durationOf(e: { startedAt: number; endedAt?: number }): number | undefined {
  return e.endedAt !== undefined && e.endedAt > e.startedAt ? e.endedAt - e.startedAt : undefined;
}

/** input + output + cache reads + cache writes: the one number GUI-Anything stores as `meta.tokens`. */
export function tokenTotal(t: Exploration['tokens']): number {
  return t.input + t.output + t.cacheRead + t.cacheWrite;
}

/** The first 8 words, at most 48 characters; a redaction marker (two words) is kept whole or left out. */
function shortTitle(question: string): string {
  const text = question.replace(/\s+/g, ' ').trim();
  const words = text.split(' ').slice(0, 8).join(' ');
  return clipOutsideMarkers(text.slice(0, cutOutsideMarkers(text, words.length)).trimEnd(), 48);
}

/** The summary without a model: what was asked, what was done, the last answer. */
export function deterministicSummary(d: ExplorationDigest, now: number, reason?: string): SummaryItem {
  const intentKey = classifyIntent(d.question);
  const lastResponse = d.responses[d.responses.length - 1] ?? '';
  const parts = [clipOutsideMarkers(d.question, 120)];
  if (d.tools.length) parts.push(`${d.tools.length} tool${d.tools.length === 1 ? '' : 's'} (${toolSummary(d.tools)})`);
  if (d.files.length) parts.push(`files: ${d.files.slice(0, 4).join(', ')}${d.files.length > 4 ? ` +${d.files.length - 4}` : ''}`);
  if (d.errors.length) parts.push(`${d.errors.length} error${d.errors.length === 1 ? '' : 's'}`);
  if (lastResponse) parts.push(`answer: ${lastResponse.replace(/\s+/g, ' ').slice(0, 300)}`);
  const didWork = d.tools.some((t) => t.phase === 'execute' || t.phase === 'verify');
  const persistMeta: WikiPersistMeta = {
    should_persist: d.tools.length > 0 && intentKey !== 'greeting',
    type: d.errors.length && intentKey === 'debug' ? 'error' : 'context',
    slug: slugify(d.question) || undefined,
    title: shortTitle(d.question),
    ...(didWork && lastResponse ? { solution_detail: lastResponse.slice(0, 800) } : {}),
    tags: [intentKey],
    intent_key: intentKey,
    confidence: 0.5,
  };
  const prev = d.previousHint;
  const flowchart: FlowchartHint = {
    nodeId: d.explorationId,
    nodeTitle: shortTitle(d.question),
    parentId: prev?.nodeId ?? null,
    branchType: prev && d.errors.length === 0 && intentKey === 'debug' ? 'repair' : 'trunk',
    importance: didWork ? 'high' : d.tools.length ? 'medium' : 'low',
    dropFromChart: intentKey === 'greeting',
    intentKey,
  };
  return {
    explorationId: d.explorationId,
    text: parts.join(' — '),
    source: 'fallback',
    status: 'ready',
    ...(reason ? { reason } : {}),
    flowchart,
    persistMeta,
    savedAt: now,
  };
}
