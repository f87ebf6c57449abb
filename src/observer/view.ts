/**
 * The session as every front end shows it (terminal UI, `--once --json`, the
 * web API): built from the live transcript plus the bundle, or from the bundle
 * alone in restore mode.
 */
import type { BundleExploration, ExplorationMeta, RetrievalRecord, SessionBundle, SummaryItem, WriteRecord } from './bundle/types.js';
import type { BundleLoadReason, BundleLoadStatus } from './bundle/store.js';
import { toolSummary } from './summary/digest.js';
import type { Exploration, TranscriptIssue } from './transcript/types.js';

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
  tokens: ExplorationMeta['tokens'] | null;
  /** The tool running right now, for the live card. */
  activeTool: string | null;
  /** undefined = not searched yet; null = no prior knowledge; else the KNOWLEDGE card. */
  knowledge: RetrievalRecord | null | undefined;
  summary: SummaryItem | null;
  /** The wiki badge: present on an intent's anchor turn only. */
  wiki: WriteRecord | null;
}

export interface SessionView {
  sessionId: string;
  jsonlPath: string;
  workspaceRoot: string;
  mode: 'live' | 'restore';
  load: { status: BundleLoadStatus; reason?: BundleLoadReason; detail?: string };
  intent: { intentKey: string; nodeTitle: string; phase: string } | null;
  explorations: ExplorationView[];
  transcript: { lines: number; issueCount: number; issues: TranscriptIssue[]; lastPrompt: string | null } | null;
  tokens: { input: number; output: number };
  updatedAt: number;
}

export function explorationMeta(e: Exploration): ExplorationMeta | undefined {
  if (e.status === 'running') return undefined;
  const tools = e.nodes.filter((n) => n.type === 'tool');
  const summary = toolSummary(tools.map((t) => ({ name: t.name ?? 'tool' })));
  return {
    status: e.status,
    toolCount: tools.length,
    errorCount: e.nodes.filter((n) => n.status === 'error' || n.type === 'error').length,
    ...(summary ? { toolSummary: summary } : {}),
    tokens: { ...e.tokens },
    ...(e.files.length ? { files: e.files.slice(0, 50) } : {}),
    ...(e.endedAt !== undefined ? { durationMs: e.endedAt - e.startedAt } : {}),
  };
}

function fromLive(e: Exploration, b: BundleExploration | undefined): ExplorationView {
  const tools = e.nodes.filter((n) => n.type === 'tool');
  const running = [...tools].reverse().find((n) => n.status === 'running');
  return {
    id: e.id,
    question: e.question,
    slashCommands: e.slashCommands,
    status: e.status,
    toolCount: tools.length,
    errorCount: e.nodes.filter((n) => n.status === 'error' || n.type === 'error').length,
    toolSummary: toolSummary(tools.map((t) => ({ name: t.name ?? 'tool' }))),
    files: e.files.slice(0, 20),
    durationMs: e.endedAt !== undefined ? e.endedAt - e.startedAt : null,
    tokens: { ...e.tokens },
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
    durationMs: b.meta?.durationMs ?? null,
    tokens: b.meta?.tokens ?? null,
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
}): SessionView {
  const { bundle } = input;
  const explorations = input.explorations
    ? input.explorations.map((e) => fromLive(e, bundle.explorations[e.id]))
    : Object.values(bundle.explorations)
        .sort((a, b) => expOrder(a.explorationId) - expOrder(b.explorationId))
        .map(fromBundle);
  const tokens = { input: 0, output: 0 };
  for (const e of explorations) {
    tokens.input += e.tokens?.input ?? 0;
    tokens.output += e.tokens?.output ?? 0;
  }
  const intent = bundle.session.intent;
  return {
    sessionId: bundle.meta.sessionId,
    jsonlPath: bundle.meta.jsonlPath,
    workspaceRoot: bundle.meta.workspaceRoot,
    mode: input.mode,
    load: input.load,
    intent: intent ? { intentKey: intent.intentKey, nodeTitle: intent.nodeTitle, phase: intent.phase } : null,
    explorations,
    transcript: input.transcript,
    tokens,
    updatedAt: bundle.meta.updatedAt,
  };
}
