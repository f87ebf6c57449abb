/**
 * The session as every front end shows it (terminal UI, `--once --json`, the
 * web API): built from the live transcript plus the bundle, or from the bundle
 * alone in restore mode.
 */
import type { BundleExploration, ExplorationMeta, RetrievalRecord, SessionBundle, SummaryItem, TokenUsage, WriteRecord } from './bundle/types.js';
import type { BundleLoadReason, BundleLoadStatus } from './bundle/store.js';
import { durationOf, tokenTotal, toolSummary } from './summary/digest.js';
import type { Exploration, ExplorationNode, SessionEvent, TranscriptIssue } from './transcript/types.js';

export interface ExplorationView {
  id: string;
  question: string;
  slashCommands: string[];
  status: 'running' | 'complete' | 'interrupted';
  toolCount: number;
  errorCount: number;
  toolSummary: string;
  files: string[];
  durationMs: number | null;
  /** The total (GUI-Anything's number); null when no usage was reported. */
  tokens: number | null;
  /** By kind, when known (a GUI-Anything bundle has only the total). */
  tokenBreakdown: TokenUsage | null;
  /** In-file subagent runs, shown nested under the exploration; their tools are in toolCount too. */
  subagents: Array<{ prompt: string; toolCount: number; errorCount: number; toolSummary?: string }>;
  /** The tool running right now, for the live card. */
  activeTool: string | null;
  /** Absent (undefined, dropped from JSON) = not searched yet; null = no prior knowledge; else the KNOWLEDGE card. */
  knowledge?: RetrievalRecord | null | undefined;
  summary: SummaryItem | null;
  /** The wiki badge: present on an intent's anchor turn only. */
  wiki: WriteRecord | null;
}

export interface SessionView {
  sessionId: string;
  jsonlPath: string;
  workspaceRoot: string;
  mode: 'live' | 'restore';
  /** `found`: what was on disk when the session was opened, once the bundle was written since (status is then 'hit'). */
  load: { status: BundleLoadStatus; reason?: BundleLoadReason; detail?: string; found?: { status: BundleLoadStatus; reason?: BundleLoadReason } };
  /** Why this session writes nothing (a wiki of another workspace, a bundle of another schema); null when it writes. */
  hold: { reason: string; detail: string } | null;
  intent: { intentKey: string; nodeTitle: string; phase: string } | null;
  explorations: ExplorationView[];
  transcript: { lines: number; issueCount: number; issues: TranscriptIssue[]; lastPrompt: string | null; sessionEvents: SessionEvent[] } | null;
  /** total always; input/output only summed over explorations whose breakdown is known. */
  tokens: { total: number; input: number; output: number };
  updatedAt: number;
}

function errorCountOf(nodes: readonly ExplorationNode[]): number {
  return nodes.filter((n) => n.status === 'error' || n.type === 'error').length;
}

/** Per subagent run: its tool summary from its own (sidechain) tool nodes, in run order. */
function subagentsOf(e: Exploration): ExplorationView['subagents'] {
  if (!e.subagents.length) return [];
  const sideTools = e.nodes.filter((n) => n.type === 'tool' && n.sidechain);
  let at = 0;
  return e.subagents.map((run) => {
    const tools = sideTools.slice(at, at + run.toolCount);
    at += run.toolCount;
    const summary = toolSummary(tools.map((t) => ({ name: t.name ?? 'tool' })));
    return { prompt: run.prompt, toolCount: run.toolCount, errorCount: run.errorCount, ...(summary ? { toolSummary: summary } : {}) };
  });
}

/**
 * The card meta written to the bundle (FORMATS §8.3), as GUI-Anything writes
 * it: tokens a number (omitted when zero), toolSummary in first-use order,
 * durationMs only when positive, optional keys left out rather than zeroed.
 */
export function explorationMeta(e: Exploration): ExplorationMeta | undefined {
  if (e.status === 'running') return undefined;
  const tools = e.nodes.filter((n) => n.type === 'tool');
  const summary = toolSummary(tools.map((t) => ({ name: t.name ?? 'tool' })));
  const total = tokenTotal(e.tokens);
  const duration = durationOf(e);
  const subagents = subagentsOf(e).map(({ prompt, toolCount, errorCount }) => ({ prompt, toolCount, errorCount }));
  return {
    status: e.status,
    toolCount: tools.length,
    errorCount: errorCountOf(e.nodes),
    ...(summary ? { toolSummary: summary } : {}),
    ...(total > 0 ? { tokens: total, tokenBreakdown: { ...e.tokens } } : {}),
    ...(e.files.length ? { files: e.files.slice(0, 50) } : {}),
    ...(duration !== undefined ? { durationMs: duration } : {}),
    ...(subagents.length ? { subagents } : {}),
  };
}

function fromLive(e: Exploration, b: BundleExploration | undefined): ExplorationView {
  const tools = e.nodes.filter((n) => n.type === 'tool');
  const running = [...tools].reverse().find((n) => n.status === 'running');
  const total = tokenTotal(e.tokens);
  return {
    id: e.id,
    question: e.question,
    slashCommands: e.slashCommands,
    status: e.status,
    toolCount: tools.length,
    errorCount: errorCountOf(e.nodes),
    toolSummary: toolSummary(tools.map((t) => ({ name: t.name ?? 'tool' }))),
    files: e.files.slice(0, 20),
    durationMs: durationOf(e) ?? null,
    tokens: total > 0 ? total : null,
    tokenBreakdown: total > 0 ? { ...e.tokens } : null,
    subagents: subagentsOf(e),
    activeTool: e.status === 'running' && running ? running.label : null,
    knowledge: b?.retrieval,
    summary: b?.summary ?? null,
    wiki: b?.write ?? null,
  };
}

function fromBundle(b: BundleExploration): ExplorationView {
  return {
    id: b.explorationId,
    question: b.question,
    slashCommands: b.question.startsWith('/') ? [b.question.split(' ')[0]!] : [],
    status: b.meta?.status ?? 'running',
    toolCount: b.meta?.toolCount ?? 0,
    errorCount: b.meta?.errorCount ?? 0,
    toolSummary: b.meta?.toolSummary ?? '',
    files: b.meta?.files ?? [],
    durationMs: b.meta?.durationMs !== undefined && b.meta.durationMs > 0 ? b.meta.durationMs : null,
    tokens: b.meta?.tokens ?? null,
    tokenBreakdown: b.meta?.tokenBreakdown ?? null,
    subagents: b.meta?.subagents ?? [],
    activeTool: null,
    knowledge: b.retrieval,
    summary: b.summary ?? null,
    wiki: b.write ?? null,
  };
}

function expOrder(id: string): number {
  return Number(/^exp_(\d+)$/.exec(id)?.[1] ?? Number.MAX_SAFE_INTEGER);
}

export function buildSessionView(input: {
  bundle: SessionBundle;
  mode: 'live' | 'restore';
  load: SessionView['load'];
  explorations: readonly Exploration[] | null;
  transcript: SessionView['transcript'];
  hold?: SessionView['hold'];
}): SessionView {
  const { bundle } = input;
  const explorations = input.explorations
    ? input.explorations.map((e) => fromLive(e, bundle.explorations[e.id]))
    : Object.values(bundle.explorations)
        .sort((a, b) => expOrder(a.explorationId) - expOrder(b.explorationId))
        .map(fromBundle);
  const tokens = { total: 0, input: 0, output: 0 };
  for (const e of explorations) {
    tokens.total += e.tokens ?? 0;
    tokens.input += e.tokenBreakdown?.input ?? 0;
    tokens.output += e.tokenBreakdown?.output ?? 0;
  }
  const intent = bundle.session.intent;
  return {
    sessionId: bundle.meta.sessionId,
    jsonlPath: bundle.meta.jsonlPath,
    workspaceRoot: bundle.meta.workspaceRoot,
    mode: input.mode,
    load: input.load,
    hold: input.hold ?? null,
    intent: intent ? { intentKey: intent.intentKey, nodeTitle: intent.nodeTitle, phase: intent.phase } : null,
    explorations,
    transcript: input.transcript,
    tokens,
    updatedAt: bundle.meta.updatedAt,
  };
}
