/**
 * What the observer cuts out of a Claude Code transcript (FORMATS §8.8).
 * An exploration is one user question and everything the assistant did for
 * it until the turn ended, was interrupted, or the next question arrived.
 */

export type ToolPhase = 'explore' | 'execute' | 'verify';
export type NodeStatus = 'running' | 'ok' | 'error';
export type NodeType = 'tool' | 'response' | 'thinking' | 'error' | 'result';
export type ExplorationStatus = 'running' | 'complete' | 'interrupted';

export interface ExplorationNode {
  /** `exp_node_<global seq>` — unique over the session. */
  id: string;
  type: NodeType;
  status: NodeStatus;
  /** Short, human label: `Read src/a.ts`, `✓ 12 passed…`, the start of a response. */
  label: string;
  at: number;
  /** Tool nodes only. */
  name?: string;
  toolUseId?: string;
  phase?: ToolPhase;
  files?: string[];
  /** Bash command of a tool node, kept for the digest's `commands`. */
  command?: string;
  /** Response / thinking text, capped (RESPONSE_TEXT_CAP) to keep memory bounded. */
  text?: string;
  /** Done by an in-file subagent (`isSidechain: true`) of this exploration: counted here, shown nested. */
  sidechain?: true;
}

/** One in-file subagent run (an `isSidechain` chain) started from the exploration's turn. */
export interface SubagentRun {
  /** The prompt the main agent gave it, capped. */
  prompt: string;
  startedAt: number;
  endedAt?: number;
  toolCount: number;
  errorCount: number;
}

/** Something that happened to the session rather than a question: `/compact`, its continuation summary, a Stop-hook continuation. */
export interface SessionEvent {
  kind: SessionEventKind;
  at: number;
  line: number;
  text: string;
  /** The exploration it happened in or after, when there was one. */
  explorationId: string | null;
}

export interface TokenUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

export interface Exploration {
  /** `exp_<n>`, 1-based over the session. */
  id: string;
  index: number;
  question: string;
  slashCommands: string[];
  status: ExplorationStatus;
  completionReason?: 'end_turn' | 'result' | 'interrupted' | 'superseded';
  /** How many times work resumed after the turn had ended (Stop-hook continuations, work after a subagent). */
  continuations?: number;
  startedAt: number;
  endedAt?: number;
  nodes: ExplorationNode[];
  tokens: TokenUsage;
  files: string[];
  costUsd?: number;
  subagents: SubagentRun[];
  /** true while startedAt is the reader's clock because no record so far had a timestamp. */
  startGuessed?: true;
}

/** A line the reader could not use, reported with its 1-based line number. */
export interface TranscriptIssue {
  line: number;
  reason: string;
}

export interface TranscriptState {
  sessionId: string;
  explorations: Exploration[];
  /** The `last-prompt` record, when Claude Code wrote one. */
  lastPrompt: string | null;
  /** Lines read (complete lines only). */
  lines: number;
  /** Record types seen that the cutter does not use (`summary`, `system`, …), with counts. */
  ignoredTypes: Record<string, number>;
  issues: TranscriptIssue[];
  issueCount: number;
  /** `/compact`, continuation summaries and Stop-hook continuations, in order (capped). */
  sessionEvents: SessionEvent[];
}

export type SessionEventKind = 'compact' | 'compact-summary' | 'stop-hook';
