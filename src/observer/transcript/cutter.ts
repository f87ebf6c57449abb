/**
 * ExplorationCutter: turns Claude Code JSONL records, one line at a time, into
 * explorations (FORMATS §8.8). It is incremental so the tail can feed it
 * appended lines, and it keeps only capped text so a 50 MB transcript stays
 * within a bounded amount of memory.
 *
 * Record handling, in the order the checks run:
 *   user + tool_result block   → closes the pending tool node (never a prompt);
 *                                a result without its call becomes a `result`
 *                                node (an error one counts as an error)
 *   user isMeta                → skipped (slash-command expansions, caveats)
 *   user isSidechain text      → an in-file subagent starts inside the last
 *                                exploration (never a question)
 *   user `/compact`, a continuation summary ("This session is being
 *   continued…", isCompactSummary) → a session event, never a question
 *   user "Stop hook feedback:" → a session event; the last turn resumes
 *   user "request interrupted" → the running exploration becomes interrupted
 *   user command tags          → a prompt whose question is the slash command
 *   user local-command output  → ignored
 *   user text                  → a new exploration (a running one is interrupted)
 *   assistant                  → tool / response / thinking nodes, tokens, end_turn;
 *                                work after the turn ended (a Stop-hook
 *                                continuation, the answer after a subagent)
 *                                resumes the last exploration; a sidechain's
 *                                nodes are marked and its end_turn ends only
 *                                the subagent
 *   result                     → completes the running exploration (+ error node)
 *   error                      → a system error node
 *   system compact_boundary    → a session event
 *   last-prompt                → remembered as the session's last prompt
 *   anything else              → counted in ignoredTypes; extra fields are ignored
 * Records without a timestamp take the last one seen; before any, the
 * reader's clock, corrected when the first real timestamp arrives.
 */
import { jsonErrorOffset } from '../../lib/jsonError.js';
import type { OversizedLine } from '../../lib/lines.js';
import {
  cap,
  classifyUserText,
  collapse,
  firstUserText,
  isObject,
  IsoTimeParser,
  keep,
  LABEL_CAP,
  num,
  RESPONSE_TEXT_CAP,
  str,
  type Json,
} from './records.js';
import { hasErrorFlag, previewFromBytes, singleToolResultId, toolResultIdInHead } from './bytes.js';
import { ExplorationLog } from './explorationLog.js';
import type { Exploration } from './types.js';

export { classifyUserText, collapse, detectToolPhase, IsoTimeParser } from './records.js';
export { OVERSIZED_WATCH } from './bytes.js';

/** Lines shorter than this are parsed in full; the fast path pays off on big tool results. */
const FAST_PATH_MIN_CHARS = 2_048;
/** A UTF-16 code unit takes at most 3 bytes of UTF-8, so a line this long in bytes is long enough in chars. */
const FAST_PATH_SURE_BYTES = 3 * FAST_PATH_MIN_CHARS;

export class ExplorationCutter extends ExplorationLog {
  /** The last real timestamp seen; 0 before any. */
  private lastTs = 0;
  private readonly isoTime = new IsoTimeParser();
  /** The message id whose end_turn ended the last turn. */
  private endedBy = '';

  constructor(
    sessionId: string,
    private readonly now: () => number = Date.now,
    private readonly fastPath = true,
  ) {
    super(sessionId);
  }

  /** Feeds one complete line (without its newline). */
  pushLine(line: string): void {
    if (this.fastPath && line.length >= FAST_PATH_MIN_CHARS && this.fastToolResult(Buffer.from(line, 'utf8'))) {
      this.state.lines += 1;
      return;
    }
    this.parseLine(line);
  }

  /**
   * Feeds one complete line as bytes (without its newline); the reader's hot
   * path. The bytes may be a view of a reused read buffer: nothing keeps them.
   * A long tool-result line is classified on the bytes and never decoded as a
   * whole; any other line is decoded and parsed as by pushLine.
   */
  pushBytes(bytes: Buffer): void {
    if (this.fastPath && bytes.length >= FAST_PATH_MIN_CHARS) {
      if (bytes.length >= FAST_PATH_SURE_BYTES) {
        if (this.fastToolResult(bytes)) {
          this.state.lines += 1;
          return;
        }
      } else {
        // Between 2 and 6 KiB the char count decides, as for pushLine.
        const line = bytes.toString('utf8');
        if (line.length >= FAST_PATH_MIN_CHARS && this.fastToolResult(bytes)) {
          this.state.lines += 1;
          return;
        }
        this.parseLine(line);
        return;
      }
    }
    this.parseLine(bytes.toString('utf8'));
  }

  /**
   * A line past the reader's maximum (lib/lines.ts): only its head was kept.
   * When the head shows a single tool result, the tool it answers is still
   * closed (is_error was watched for over the whole line); either way the
   * line is reported with its number and size, and nothing else is guessed.
   */
  pushOversized(o: OversizedLine): void {
    this.state.lines += 1;
    const closed = this.toolResultFromHead(o.head, o.seen[0] === true);
    const mib = (o.bytes / (1024 * 1024)).toFixed(1);
    this.issue(o.line, `line of ${o.bytes} bytes (${mib} MiB) is over the line limit; ${closed ? `read as the result of ${closed} without its content` : 'skipped'}`);
  }

  private toolResultFromHead(head: Buffer, failed: boolean): string | null {
    const id = toolResultIdInHead(head);
    if (!id) return null;
    const node = this.pendingTools.get(id);
    if (node) this.close(node, failed, previewFromBytes(head));
    else this.orphanResult(failed, previewFromBytes(head), this.lastTs || this.now());
    return id;
  }

  private parseLine(line: string): void {
    this.state.lines += 1;
    const lineNo = this.state.lines;
    if (!line.trim()) return;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch {
      // The place only: JSON.parse's message quotes the line, and a transcript may be a link to another file.
      const at = jsonErrorOffset(line);
      this.issue(lineNo, at === null ? 'not JSON' : `not JSON (${at === line.length ? 'it ends early' : `column ${at + 1}`})`);
      return;
    }
    if (!isObject(record)) {
      this.issue(lineNo, 'not a JSON object');
      return;
    }
    this.handle(record);
  }

  /**
   * Most of a transcript's bytes are tool results (file contents, command
   * output, repeated in `toolUseResult`), and all the cutter needs from one is
   * its tool_use_id, is_error and a 60-char preview. For a long line holding
   * exactly one tool result, those are read from the raw UTF-8 bytes without
   * decoding the line or JSON.parse. This is safe because an unescaped
   * `"key":` sequence cannot occur inside a JSON string (its quotes would be
   * escaped), and UTF-8 never puts an ASCII byte inside a multi-byte char, so
   * every match below is structural. Any other shape falls back to the full
   * parse. Only the id and a bounded preview window are decoded.
   */
  private fastToolResult(line: Buffer): boolean {
    const id = singleToolResultId(line);
    const node = id ? this.pendingTools.get(id) : undefined;
    // An orphan result needs the record's timestamp: the full parse has it.
    if (!node) return false;
    this.close(node, hasErrorFlag(line), previewFromBytes(line));
    return true;
  }

  private timestamp(record: Json): number {
    const parsed = typeof record.timestamp === 'string' ? this.isoTime.parse(record.timestamp) : NaN;
    if (Number.isFinite(parsed)) {
      if (!this.lastTs) this.settleGuessedStarts(parsed);
      this.lastTs = parsed;
      return parsed;
    }
    return this.lastTs || this.now();
  }

  /** Explorations opened before any record had a timestamp got the reader's clock; the first real time replaces it. */
  private settleGuessedStarts(firstReal: number): void {
    for (const e of this.state.explorations) {
      if (!e.startGuessed) continue;
      delete e.startGuessed;
      e.startedAt = firstReal;
      // Before the first real timestamp every time was the reader's clock: an end taken then is a guess too.
      if (e.endedAt !== undefined) e.endedAt = firstReal;
    }
  }

  private handle(record: Json): void {
    const type = str(record.type);
    const at = this.timestamp(record);
    switch (type) {
      case 'user':
        return this.onUser(record, at);
      case 'assistant':
        return this.onAssistant(record, at);
      case 'result':
        return this.onResult(record, at);
      case 'error':
        return this.onError(record, at);
      case 'last-prompt':
        this.state.lastPrompt = keep(str(record.lastPrompt), 2_000) || this.state.lastPrompt;
        this.revision += 1;
        return;
      default:
        if (type === 'system' && record.subtype === 'compact_boundary') return this.sessionEvent('compact', 'compact boundary', at);
        this.state.ignoredTypes[type || '(none)'] = (this.state.ignoredTypes[type || '(none)'] ?? 0) + 1;
    }
  }

  private onUser(record: Json, at: number): void {
    const message = isObject(record.message) ? record.message : {};
    const content = message.content;
    if (Array.isArray(content) && content.some((b) => isObject(b) && b.type === 'tool_result')) {
      for (const block of content) if (isObject(block) && block.type === 'tool_result') this.closeTool(block, at);
      return;
    }
    if (record.isMeta === true) return;
    const text = firstUserText(content);
    if (record.isSidechain === true) return this.startSubagent(text, at);
    if (record.isCompactSummary === true) return this.sessionEvent('compact-summary', keep(collapse(text), 300), at);
    const prompt = classifyUserText(text);
    if (prompt.kind === 'none') return;
    if (prompt.kind === 'session') {
      this.sessionEvent(prompt.event, prompt.text, at);
      if (prompt.event === 'stop-hook') this.resume(at);
      return;
    }
    if (prompt.kind === 'interrupt') {
      const running = this.current;
      if (running) this.finish(running, 'interrupted', 'interrupted', at);
      return;
    }
    const running = this.current;
    if (running) this.finish(running, 'interrupted', 'superseded', at);
    this.subagent = null;
    const index = this.state.explorations.length + 1;
    const exploration: Exploration = {
      id: `exp_${index}`,
      index,
      question: cap(prompt.text, 2_000),
      slashCommands: prompt.command ? [prompt.command] : [],
      status: 'running',
      startedAt: at,
      nodes: [],
      tokens: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
      files: [],
      subagents: [],
      ...(this.lastTs ? {} : { startGuessed: true as const }),
    };
    this.fileSets.set(exploration, new Set());
    this.state.explorations.push(exploration);
    this.revision += 1;
  }

  /** An in-file subagent's prompt: it works for the last exploration, which it keeps running. */
  private startSubagent(text: string, at: number): void {
    const exploration = this.last;
    if (!exploration) return;
    // A sidechain chain's follow-up user texts (its own interruptions) start nothing new.
    if (this.subagent && this.subagent.endedAt === undefined) return;
    this.subagent = { prompt: keep(collapse(text), 300), startedAt: at, toolCount: 0, errorCount: 0 };
    exploration.subagents.push(this.subagent);
    if (exploration.status === 'complete') this.resume(at);
    this.revision += 1;
  }

  private onAssistant(record: Json, at: number): void {
    const sidechain = record.isSidechain === true;
    const message = isObject(record.message) ? record.message : {};
    const messageId = str(message.id);
    // Another block of the message that ended the turn is part of that turn, not a continuation.
    const sameMessage = messageId !== '' && messageId === this.endedBy;
    if (!sidechain && !sameMessage) this.resume(at);
    const exploration = sidechain || sameMessage ? this.last : this.current;
    if (!exploration) return;
    this.countTokens(exploration, record, message);
    const content = Array.isArray(message.content) ? message.content : typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : [];
    const mark = sidechain ? { sidechain: true as const } : {};
    for (const block of content) {
      if (!isObject(block)) continue;
      if (block.type === 'tool_use') this.addTool(exploration, block, at, sidechain);
      else if (block.type === 'text' && typeof block.text === 'string' && block.text.trim()) {
        const text = keep(block.text.trim(), RESPONSE_TEXT_CAP);
        this.addNode(exploration, { type: 'response', status: 'ok', label: cap(collapse(text), LABEL_CAP), text, at, ...mark });
      } else if (block.type === 'thinking') {
        const thought = typeof block.thinking === 'string' ? block.thinking : typeof block.text === 'string' ? block.text : '';
        const text = keep(thought.trim(), RESPONSE_TEXT_CAP);
        if (text) this.addNode(exploration, { type: 'thinking', status: 'ok', label: cap(collapse(text), LABEL_CAP), text, at, ...mark });
      }
    }
    if (message.stop_reason === 'end_turn') {
      if (sidechain) {
        if (this.subagent) this.subagent.endedAt = at;
      } else {
        this.finish(exploration, 'complete', 'end_turn', at);
        this.endedBy = messageId;
      }
    }
    this.revision += 1;
  }

  private onResult(record: Json, at: number): void {
    const exploration = this.last;
    if (!exploration) return;
    const cost = num(record.total_cost_usd) || num(record.cost_usd);
    if (cost) exploration.costUsd = cost;
    if (record.is_error === true) {
      const text = keep(str(record.error) || str(record.result) || 'result reported an error', RESPONSE_TEXT_CAP);
      this.addNode(exploration, { type: 'error', status: 'error', label: cap(collapse(text), LABEL_CAP), text, at });
    }
    if (exploration.status === 'running') this.finish(exploration, 'complete', 'result', at);
    this.revision += 1;
  }

  private onError(record: Json, at: number): void {
    const exploration = this.last;
    if (!exploration) return;
    const err = record.error;
    const text = keep(str(err) || (isObject(err) ? str(err.message) : '') || str(record.message) || 'error', RESPONSE_TEXT_CAP);
    this.addNode(exploration, { type: 'error', status: 'error', label: cap(`system: ${collapse(text)}`, LABEL_CAP), text, at });
  }

}
