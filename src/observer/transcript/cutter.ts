/**
 * ExplorationCutter: turns Claude Code JSONL records, one line at a time, into
 * explorations (FORMATS §8.8). It is incremental so the tail can feed it
 * appended lines, and it keeps only capped text so a 50 MB transcript stays
 * within a bounded amount of memory.
 *
 * Record handling, in the order the checks run:
 *   user + tool_result block   → closes the pending tool node (never a prompt)
 *   user isMeta                → skipped (slash-command expansions, caveats)
 *   user "request interrupted" → the running exploration becomes interrupted
 *   user command tags          → a prompt whose question is the slash command
 *   user local-command output  → ignored
 *   user text                  → a new exploration (a running one is interrupted)
 *   assistant                  → tool / response / thinking nodes, tokens, end_turn
 *   result                     → completes the running exploration (+ error node)
 *   error                      → a system error node
 *   last-prompt                → remembered as the session's last prompt
 *   anything else              → counted in ignoredTypes; extra fields are ignored
 */
import type { Exploration, ExplorationNode, ToolPhase, TranscriptState } from './types.js';

/** Caps that bound memory per node; the UI and digests never show more. */
const RESPONSE_TEXT_CAP = 1_200;
const LABEL_CAP = 80;
const RESULT_PREVIEW = 60;
const FILES_PER_EXPLORATION_CAP = 200;
/** Keep the first issues with their line numbers; count the rest. */
const ISSUE_CAP = 200;
/** Lines shorter than this are parsed in full; the fast path pays off on big tool results. */
const FAST_PATH_MIN_CHARS = 2_048;
/** A UTF-16 code unit takes at most 3 bytes of UTF-8, so a line this long in bytes is long enough in chars. */
const FAST_PATH_SURE_BYTES = 3 * FAST_PATH_MIN_CHARS;
const PREVIEW = /"content":"((?:[^"\\]|\\.){0,240})|"content":\[\{"type":"text","text":"((?:[^"\\]|\\.){0,240})/;
/** How far after `"message":` the preview is looked for (the first 64 KiB). */
const PREVIEW_SEARCH_BYTES = 64 * 1024;
/** Bytes decoded for the preview regex: its longest match (35-byte key + 240 units of ≤ 3 bytes) fits well within. */
const PREVIEW_DECODE_BYTES = 2_048;
const ascii = (s: string) => Buffer.from(s, 'latin1');
const B_TYPE_USER = ascii('"type":"user"');
const B_TYPE_TOOL_RESULT = ascii('"type":"tool_result"');
const B_TOOL_USE_ID = ascii('"tool_use_id":"');
const B_IS_ERROR_TRUE = ascii('"is_error":true');
const B_MESSAGE = ascii('"message":');
const B_CONTENT_STRING = ascii('"content":"');
const B_CONTENT_TEXT = ascii('"content":[{"type":"text","text":"');
const QUOTE = 0x22;

const VERIFY_WORDS = ['test', 'pytest', 'jest', 'mocha', 'lint', 'build', 'compile', 'run'];
const EXECUTE_TOOLS = new Set(['edit', 'write', 'multiedit', 'notebookedit']);
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/** Whitespace that `\s+ → ' '` would change: any run of two, or any whitespace but a plain space. */
const UNCOLLAPSED = /[^\S ]|\s\s/;

export function collapse(text: string): string {
  // The checks skip the replacements (and their allocations) when they would change nothing.
  const plain = text.includes('\u001b') ? text.replace(ANSI, '') : text;
  return (UNCOLLAPSED.test(plain) ? plain.replace(/\s+/g, ' ') : plain).trim();
}

function cap(text: string, n: number): string {
  return text.length > n ? `${text.slice(0, n - 1)}…` : text;
}

export function detectToolPhase(name: string, input: unknown): ToolPhase {
  const lower = name.toLowerCase();
  if (EXECUTE_TOOLS.has(lower)) return 'execute';
  if (lower === 'bash' && isObject(input)) {
    const text = `${str(input.command)} ${str(input.description)}`.toLowerCase();
    if (VERIFY_WORDS.some((w) => text.includes(w))) return 'verify';
  }
  return 'explore';
}

function toolFiles(input: unknown): string[] {
  if (!isObject(input)) return [];
  const file = str(input.file_path) || str(input.path) || str(input.notebook_path);
  return file ? [file] : [];
}

function toolLabel(name: string, input: unknown): string {
  if (!isObject(input)) return name;
  const target = str(input.file_path) || str(input.notebook_path) || str(input.command) || str(input.pattern) || str(input.path) || str(input.url) || str(input.description);
  return cap(target ? `${name} ${collapse(target)}` : name, LABEL_CAP);
}

function resultPreview(content: unknown): string {
  if (typeof content === 'string') return collapse(content.slice(0, RESULT_PREVIEW * 4));
  if (Array.isArray(content)) {
    for (const block of content) if (isObject(block) && typeof block.text === 'string') return collapse(block.text.slice(0, RESULT_PREVIEW * 4));
  }
  return '';
}

const COMMAND_NAME = /<command-name>\s*([^<]+?)\s*<\/command-name>/i;
const COMMAND_MESSAGE = /<command-message>\s*([^<]+?)\s*<\/command-message>/i;
const COMMAND_ARGS = /<command-args>\s*([^<]*?)\s*<\/command-args>/i;
const OPERATIONAL = /<(local-command-caveat|local-command-stdout|local-command-stderr|command-name|command-message|command-args)>/i;

type Prompt = { kind: 'question'; text: string; command?: string } | { kind: 'interrupt' } | { kind: 'none' };

/** What a user text means: a question, a slash command, an interruption, or nothing. */
export function classifyUserText(raw: string): Prompt {
  const text = collapse(raw);
  if (!text) return { kind: 'none' };
  if (text.toLowerCase().includes('request interrupted by user')) return { kind: 'interrupt' };
  const name = COMMAND_NAME.exec(text)?.[1] ?? '';
  const message = COMMAND_MESSAGE.exec(text)?.[1] ?? '';
  const command = name || (message ? (message.startsWith('/') ? message : `/${message}`) : '');
  if (command) {
    const args = COMMAND_ARGS.exec(text)?.[1] ?? '';
    return { kind: 'question', text: args ? `${command} ${args}` : command, command };
  }
  if (OPERATIONAL.test(text)) return { kind: 'none' };
  return { kind: 'question', text };
}

function firstUserText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  for (const block of content) if (isObject(block) && block.type === 'text' && typeof block.text === 'string') return block.text;
  return '';
}

/** `YYYY-MM-DDTHH:MM:SS.sssZ`, digits where digits go (the ranges are left to Date.parse via the minute). */
const ISO_SHAPE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

function digits2(s: string, at: number): number {
  return (s.charCodeAt(at) - 48) * 10 + (s.charCodeAt(at + 1) - 48);
}

/**
 * Date.parse for transcript timestamps, which come in order and share their
 * minute: `YYYY-MM-DDTHH:MM:SS.sssZ` reuses the parsed minute and adds seconds
 * and milliseconds; anything else goes to Date.parse. Same results as Date.parse.
 */
export class IsoTimeParser {
  private minute = '';
  private minuteMs = NaN;

  parse(s: string): number {
    if (s.length !== 24 || !ISO_SHAPE.test(s)) return Date.parse(s);
    const sec = digits2(s, 17);
    const ms10 = digits2(s, 20);
    const ms1 = s.charCodeAt(22) - 48;
    // Hour 24 is valid only as 24:00:00.000; leave it (and anything odd) to Date.parse.
    if (sec > 59 || (s.charCodeAt(11) === 0x32 && s.charCodeAt(12) === 0x34)) return Date.parse(s);
    const minute = s.slice(0, 16);
    if (minute !== this.minute) {
      this.minute = minute;
      this.minuteMs = Date.parse(`${minute}:00.000Z`);
    }
    return Number.isNaN(this.minuteMs) ? Date.parse(s) : this.minuteMs + sec * 1000 + ms10 * 10 + ms1;
  }
}

export class ExplorationCutter {
  readonly state: TranscriptState;
  private nodeSeq = 0;
  private lastTs = 0;
  private readonly countedMessages = new Set<string>();
  private readonly pendingTools = new Map<string, ExplorationNode>();
  private readonly fileSets = new WeakMap<Exploration, Set<string>>();
  private readonly isoTime = new IsoTimeParser();
  /** Bumped on every change so callers can skip work when nothing moved. */
  revision = 0;

  constructor(
    sessionId: string,
    private readonly now: () => number = Date.now,
    private readonly fastPath = true,
  ) {
    this.state = { sessionId, explorations: [], lastPrompt: null, lines: 0, ignoredTypes: {}, issues: [], issueCount: 0 };
  }

  get current(): Exploration | undefined {
    const last = this.state.explorations[this.state.explorations.length - 1];
    return last?.status === 'running' ? last : undefined;
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

  private parseLine(line: string): void {
    this.state.lines += 1;
    const lineNo = this.state.lines;
    if (!line.trim()) return;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch (err) {
      this.issue(lineNo, `not JSON (${(err as Error).message.slice(0, 80)})`);
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
    if (line[0] !== 0x7b || line[line.length - 1] !== 0x7d) return false;
    if (line.indexOf(B_TYPE_USER) < 0 || line.indexOf(B_TYPE_TOOL_RESULT) < 0) return false;
    const first = line.indexOf(B_TOOL_USE_ID);
    if (first < 0 || line.indexOf(B_TOOL_USE_ID, first + B_TOOL_USE_ID.length) >= 0) return false;
    const idStart = first + B_TOOL_USE_ID.length;
    const idEnd = line.indexOf(QUOTE, idStart);
    if (idEnd < 0) return false;
    const id = line.toString('utf8', idStart, idEnd);
    if (!id || id.includes('\\')) return false;
    const node = this.pendingTools.get(id);
    if (node) {
      const failed = line.indexOf(B_IS_ERROR_TRUE) >= 0;
      const message = line.indexOf(B_MESSAGE);
      const window = message >= 0 ? line.subarray(message, message + PREVIEW_SEARCH_BYTES) : line;
      // The regex's leftmost match starts at the first of its two keys.
      const asString = window.indexOf(B_CONTENT_STRING);
      const asText = window.indexOf(B_CONTENT_TEXT);
      const at = asString < 0 ? asText : asText < 0 ? asString : Math.min(asString, asText);
      const m = at >= 0 ? PREVIEW.exec(window.toString('utf8', at, Math.min(window.length, at + PREVIEW_DECODE_BYTES))) : null;
      let preview = m ? (m[1] ?? m[2] ?? '') : '';
      try {
        preview = JSON.parse(`"${preview}"`) as string;
      } catch {
        // cut inside an escape sequence: keep the raw text for a label
      }
      this.close(node, failed, collapse(preview.slice(0, RESULT_PREVIEW * 4)));
    }
    return true;
  }

  issue(line: number, reason: string): void {
    this.state.issueCount += 1;
    if (this.state.issues.length < ISSUE_CAP) this.state.issues.push({ line, reason });
    this.revision += 1;
  }

  private timestamp(record: Json): number {
    const parsed = typeof record.timestamp === 'string' ? this.isoTime.parse(record.timestamp) : NaN;
    if (Number.isFinite(parsed)) this.lastTs = parsed;
    else if (!this.lastTs) this.lastTs = this.now();
    return this.lastTs;
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
        this.state.lastPrompt = str(record.lastPrompt) || this.state.lastPrompt;
        this.revision += 1;
        return;
      default:
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
    const prompt = classifyUserText(firstUserText(content));
    if (prompt.kind === 'none') return;
    if (prompt.kind === 'interrupt') {
      const running = this.current;
      if (running) this.finish(running, 'interrupted', 'interrupted', at);
      return;
    }
    const running = this.current;
    if (running) this.finish(running, 'interrupted', 'superseded', at);
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
    };
    this.fileSets.set(exploration, new Set());
    this.state.explorations.push(exploration);
    this.revision += 1;
  }

  private onAssistant(record: Json, at: number): void {
    const exploration = this.current;
    const message = isObject(record.message) ? record.message : {};
    if (!exploration) return;
    const usage = isObject(message.usage) ? message.usage : undefined;
    const messageId = str(message.id) || str(record.uuid);
    if (usage && !(messageId && this.countedMessages.has(messageId))) {
      if (messageId) this.countedMessages.add(messageId);
      exploration.tokens.input += num(usage.input_tokens);
      exploration.tokens.output += num(usage.output_tokens);
      exploration.tokens.cacheRead += num(usage.cache_read_input_tokens);
      exploration.tokens.cacheWrite += num(usage.cache_creation_input_tokens);
    }
    const content = Array.isArray(message.content) ? message.content : typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : [];
    for (const block of content) {
      if (!isObject(block)) continue;
      if (block.type === 'tool_use') this.addTool(exploration, block, at);
      else if (block.type === 'text' && typeof block.text === 'string' && block.text.trim()) {
        this.addNode(exploration, { type: 'response', status: 'ok', label: cap(collapse(block.text), LABEL_CAP), text: cap(block.text.trim(), RESPONSE_TEXT_CAP), at });
      } else if (block.type === 'thinking' && typeof block.thinking === 'string' && block.thinking.trim()) {
        this.addNode(exploration, { type: 'thinking', status: 'ok', label: cap(collapse(block.thinking), LABEL_CAP), text: cap(block.thinking.trim(), RESPONSE_TEXT_CAP), at });
      } else if (block.type === 'thinking' && typeof block.text === 'string' && block.text.trim()) {
        this.addNode(exploration, { type: 'thinking', status: 'ok', label: cap(collapse(block.text), LABEL_CAP), text: cap(block.text.trim(), RESPONSE_TEXT_CAP), at });
      }
    }
    if (message.stop_reason === 'end_turn') this.finish(exploration, 'complete', 'end_turn', at);
    this.revision += 1;
  }

  private onResult(record: Json, at: number): void {
    const exploration = this.current ?? this.state.explorations[this.state.explorations.length - 1];
    if (!exploration) return;
    const cost = num(record.total_cost_usd) || num(record.cost_usd);
    if (cost) exploration.costUsd = cost;
    if (record.is_error === true) {
      const text = str(record.error) || str(record.result) || 'result reported an error';
      this.addNode(exploration, { type: 'error', status: 'error', label: cap(collapse(text), LABEL_CAP), text: cap(text, RESPONSE_TEXT_CAP), at });
    }
    if (exploration.status === 'running') this.finish(exploration, 'complete', 'result', at);
    this.revision += 1;
  }

  private onError(record: Json, at: number): void {
    const exploration = this.current ?? this.state.explorations[this.state.explorations.length - 1];
    if (!exploration) return;
    const err = record.error;
    const text = str(err) || (isObject(err) ? str(err.message) : '') || str(record.message) || 'error';
    this.addNode(exploration, { type: 'error', status: 'error', label: cap(`system: ${collapse(text)}`, LABEL_CAP), text: cap(text, RESPONSE_TEXT_CAP), at });
  }

  private addTool(exploration: Exploration, block: Json, at: number): void {
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
      ...(name.toLowerCase() === 'bash' && isObject(block.input) && str(block.input.command) ? { command: cap(str(block.input.command), 300) } : {}),
      ...(str(block.id) ? { toolUseId: str(block.id) } : {}),
    });
    if (node.toolUseId) this.pendingTools.set(node.toolUseId, node);
    const set = this.fileSets.get(exploration);
    for (const file of files) {
      if (set && !set.has(file) && set.size < FILES_PER_EXPLORATION_CAP) {
        set.add(file);
        exploration.files.push(file);
      }
    }
  }

  private closeTool(block: Json, at: number): void {
    const node = this.pendingTools.get(str(block.tool_use_id));
    if (!node) return;
    void at;
    this.close(node, block.is_error === true, resultPreview(block.content));
  }

  private close(node: ExplorationNode, failed: boolean, rawPreview: string): void {
    this.pendingTools.delete(node.toolUseId!);
    node.status = failed ? 'error' : 'ok';
    const preview = cap(rawPreview, RESULT_PREVIEW);
    node.label = cap(`${failed ? '✗' : '✓'} ${node.label}${preview ? ` — ${preview}` : ''}`, LABEL_CAP + RESULT_PREVIEW);
    this.revision += 1;
  }

  private addNode(exploration: Exploration, fields: Omit<ExplorationNode, 'id'>): ExplorationNode {
    this.nodeSeq += 1;
    const node: ExplorationNode = { id: `exp_node_${this.nodeSeq}`, ...fields };
    exploration.nodes.push(node);
    this.revision += 1;
    return node;
  }

  private finish(exploration: Exploration, status: 'complete' | 'interrupted', reason: Exploration['completionReason'], at: number): void {
    exploration.status = status;
    exploration.completionReason = reason;
    exploration.endedAt = at;
    this.revision += 1;
  }
}
