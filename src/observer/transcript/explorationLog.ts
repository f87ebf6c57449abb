/**
 * ExplorationLog: the explorations of one transcript and the bookkeeping on them that does not
 * depend on how a record was read: nodes added and numbered, tool calls left open until their
 * result arrives, files and tokens counted once, subagents, issues and session events (capped),
 * and a revision bumped on every change. ExplorationCutter (cutter.ts) decides, record by record,
 * which of these happens.
 */
import {
  cap,
  detectToolPhase,
  isObject,
  keep,
  LABEL_CAP,
  num,
  RESULT_PREVIEW,
  resultPreview,
  str,
  toolFiles,
  toolLabel,
  type Json,
  type SessionEventKind,
} from './records.js';
import type { Exploration, ExplorationNode, SubagentRun, TranscriptState } from './types.js';

const FILES_PER_EXPLORATION_CAP = 200;
/** Keep the first issues and session events with their line numbers; count the rest. */
const ISSUE_CAP = 200;
const SESSION_EVENT_CAP = 200;

export class ExplorationLog {
  readonly state: TranscriptState;
  private nodeSeq = 0;
  private readonly countedMessages = new Set<string>();
  protected readonly pendingTools = new Map<string, ExplorationNode>();
  protected readonly fileSets = new WeakMap<Exploration, Set<string>>();
  /** The subagent currently running in the last exploration, if any. */
  protected subagent: SubagentRun | null = null;
  /** Bumped on every change so callers can skip work when nothing moved. */
  revision = 0;

  constructor(sessionId: string) {
    this.state = { sessionId, explorations: [], lastPrompt: null, lines: 0, ignoredTypes: {}, issues: [], issueCount: 0, sessionEvents: [] };
  }

  get current(): Exploration | undefined {
    const last = this.last;
    return last?.status === 'running' ? last : undefined;
  }

  /** The last exploration, running or not: where work that arrives after a turn ended belongs. */
  get last(): Exploration | undefined {
    return this.state.explorations[this.state.explorations.length - 1];
  }

  issue(line: number, reason: string): void {
    this.state.issueCount += 1;
    if (this.state.issues.length < ISSUE_CAP) this.state.issues.push({ line, reason });
    this.revision += 1;
  }

  protected sessionEvent(kind: SessionEventKind, text: string, at: number): void {
    if (this.state.sessionEvents.length < SESSION_EVENT_CAP) this.state.sessionEvents.push({ kind, at, line: this.state.lines, text, explorationId: this.last?.id ?? null });
    this.revision += 1;
  }

  /** Work arrived after the last turn ended: it belongs to that turn, which runs again until it ends again. */
  protected resume(at: number): void {
    const exploration = this.last;
    if (!exploration || exploration.status !== 'complete') return;
    exploration.status = 'running';
    delete exploration.completionReason;
    delete exploration.endedAt;
    exploration.continuations = (exploration.continuations ?? 0) + 1;
    void at;
    this.revision += 1;
  }

  protected countTokens(exploration: Exploration, record: Json, message: Json): void {
    const usage = isObject(message.usage) ? message.usage : undefined;
    const messageId = str(message.id) || str(record.uuid);
    if (!usage || (messageId && this.countedMessages.has(messageId))) return;
    if (messageId) this.countedMessages.add(messageId);
    exploration.tokens.input += num(usage.input_tokens);
    exploration.tokens.output += num(usage.output_tokens);
    exploration.tokens.cacheRead += num(usage.cache_read_input_tokens);
    exploration.tokens.cacheWrite += num(usage.cache_creation_input_tokens);
  }

  protected addTool(exploration: Exploration, block: Json, at: number, sidechain: boolean): void {
    const name = str(block.name) || 'tool';
    const files = toolFiles(block.input);
    const node = this.addNode(exploration, {
      type: 'tool',
      status: 'running',
      name,
      label: toolLabel(name, block.input),
      phase: detectToolPhase(name, block.input),
      files,
      at,
      ...(name.toLowerCase() === 'bash' && isObject(block.input) && str(block.input.command) ? { command: keep(str(block.input.command), 300) } : {}),
      ...(str(block.id) ? { toolUseId: str(block.id) } : {}),
      ...(sidechain ? { sidechain: true as const } : {}),
    });
    if (sidechain && this.subagent) this.subagent.toolCount += 1;
    if (node.toolUseId) this.pendingTools.set(node.toolUseId, node);
    const set = this.fileSets.get(exploration);
    for (const file of files) {
      if (set && !set.has(file) && set.size < FILES_PER_EXPLORATION_CAP) {
        set.add(file);
        exploration.files.push(file);
      }
    }
  }

  protected closeTool(block: Json, at: number): void {
    const node = this.pendingTools.get(str(block.tool_use_id));
    if (node) this.close(node, block.is_error === true, resultPreview(block.content));
    else this.orphanResult(block.is_error === true, resultPreview(block.content), at);
  }

  /** A result whose call is not in the transcript (resumed or compacted sessions): kept as a result node, an error counted. */
  protected orphanResult(failed: boolean, preview: string, at: number): void {
    const exploration = this.last;
    if (!exploration) return;
    const label = cap(`${failed ? 'tool error' : 'tool result'}${preview ? ` ${keep(preview, RESULT_PREVIEW)}` : ''}`, LABEL_CAP);
    this.addNode(exploration, { type: 'result', status: failed ? 'error' : 'ok', label, at });
  }

  protected close(node: ExplorationNode, failed: boolean, rawPreview: string): void {
    this.pendingTools.delete(node.toolUseId!);
    node.status = failed ? 'error' : 'ok';
    if (failed && node.sidechain && this.subagent) this.subagent.errorCount += 1;
    const preview = keep(rawPreview, RESULT_PREVIEW);
    node.label = cap(`${failed ? '✗' : '✓'} ${node.label}${preview ? ` — ${preview}` : ''}`, LABEL_CAP + RESULT_PREVIEW);
    this.revision += 1;
  }

  protected addNode(exploration: Exploration, fields: Omit<ExplorationNode, 'id'>): ExplorationNode {
    this.nodeSeq += 1;
    const node: ExplorationNode = { id: `exp_node_${this.nodeSeq}`, ...fields };
    exploration.nodes.push(node);
    this.revision += 1;
    return node;
  }

  protected finish(exploration: Exploration, status: 'complete' | 'interrupted', reason: Exploration['completionReason'], at: number): void {
    exploration.status = status;
    exploration.completionReason = reason;
    exploration.endedAt = at;
    this.revision += 1;
  }
}
