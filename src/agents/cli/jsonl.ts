/**
 * The plumbing every JSONL agent CLI shares (`codex exec --json`, `gemini
 * --output-format stream-json`, `cursor-agent --output-format stream-json`,
 * `opencode run --format json`): start the tool from an argv (never through a
 * shell) in its own process group, split stdout into lines, parse each line
 * as JSON and hand it to the tool's parser, keep the lines that were not JSON
 * (with their line number) and count the event types the parser did not
 * know, keep the last lines of stderr, and end the whole group on abort.
 *
 * What the stream means is the parser's business (one small module per
 * tool); what a failed run means is failure.ts's.
 */
import { spawn } from 'node:child_process';
import { LineSplitter } from '../../lib/lines.js';
import { trackResource } from '../../lib/resources.js';
import type { AgentToolEvent, StreamDiagnostics } from '../types.js';
import { sandboxStartError } from '../../lib/sandbox.js';

/** Where a parser sends what the user should see live. */
export interface ParserSink {
  token(text: string): void;
  tool(event: AgentToolEvent): void;
}

export interface ReportedUsage {
  inputTokens: number;
  outputTokens: number;
  /** What the tool itself says the run cost; null when it does not say (codex, gemini, cursor). */
  costUsd: number | null;
}

/** The stream's verdict once it ended. */
export type StreamOutcome =
  | { kind: 'result'; text: string; sessionId: string | null; usage: ReportedUsage }
  | { kind: 'error'; message: string; sessionId: string | null }
  | { kind: 'none'; sessionId: string | null };

export interface EventParser {
  /** One JSON object from the stream; false when its type is unknown (it is then counted and ignored). */
  handle(event: Record<string, unknown>, line: number): boolean;
  outcome(): StreamOutcome;
}

const MAX_MALFORMED_KEPT = 20;
const MALFORMED_TEXT_CHARS = 200;

/** Feeds lines to a parser and keeps the diagnostics; separate from the process so tests can drive it with text. */
export class JsonlReader {
  readonly diagnostics: StreamDiagnostics = { lines: 0, malformed: [], unknownTypes: {} };
  /** The one line splitter (src/lib/lines.ts): a long line is joined once, a line past its limit never held whole. */
  private readonly splitter = new LineSplitter();
  constructor(private readonly parser: EventParser) {}

  push(chunk: string | Buffer): void {
    this.splitter.push(
      typeof chunk === 'string' ? Buffer.from(chunk) : chunk,
      (bytes) => this.line(bytes.toString('utf8')),
      (o) => this.malformed(++this.diagnostics.lines, `(a line of ${o.bytes} bytes, over the reader's limit: skipped) ${o.head.toString('utf8', 0, MALFORMED_TEXT_CHARS)}`),
    );
  }

  /** The stream ended: a last line without a newline (a tool killed mid-line leaves one) is read too. */
  end(): StreamOutcome {
    const last = this.splitter.pending;
    this.splitter.reset();
    if (last) this.line(last.toString('utf8'));
    return this.parser.outcome();
  }

  private malformed(line: number, text: string): void {
    if (this.diagnostics.malformed.length < MAX_MALFORMED_KEPT) this.diagnostics.malformed.push({ line, text: text.slice(0, MALFORMED_TEXT_CHARS) });
  }

  private line(raw: string): void {
    const n = ++this.diagnostics.lines;
    const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (!text.trim()) return;
    let event: unknown;
    try {
      event = JSON.parse(text);
    } catch {
      event = undefined;
    }
    if (!event || typeof event !== 'object' || Array.isArray(event)) {
      // Tools print the odd warning to stdout; it is kept for the report, the run goes on.
      this.malformed(n, text);
      return;
    }
    const record = event as Record<string, unknown>;
    if (!this.parser.handle(record, n)) {
      const type = typeof record.type === 'string' ? record.type : '(no type)';
      this.diagnostics.unknownTypes[type] = (this.diagnostics.unknownTypes[type] ?? 0) + 1;
    }
  }
}

/** Keeps the last lines a process wrote to stderr, for the message of a failed run. */
export class StderrTail {
  private text = '';
  constructor(private readonly maxChars = 8000) {}
  push(chunk: string): void {
    this.text = (this.text + chunk).slice(-this.maxChars);
  }
  lines(n = 5): string[] {
    return this.text.split('\n').map((l) => l.trimEnd()).filter(Boolean).slice(-n);
  }
}

export interface JsonlProcess {
  file: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Written to the tool's stdin, which is then closed (prompts go here when the tool reads them from stdin). */
  stdin: string;
  signal: AbortSignal;
  parser: EventParser;
}

export interface JsonlExit {
  outcome: StreamOutcome;
  diagnostics: StreamDiagnostics;
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string[];
  /** Set when the executable could not be started at all (ENOENT: not installed). */
  spawnError: NodeJS.ErrnoException | null;
  aborted: boolean;
}

const KILL_GRACE_MS = 2000;

/** Runs the tool to its end (or abort) and reports what happened; never rejects. */
export function runJsonl(p: JsonlProcess): Promise<JsonlExit> {
  const reader = new JsonlReader(p.parser);
  const stderr = new StderrTail();
  return new Promise((resolve) => {
    const child = spawn(p.file, p.args, { cwd: p.cwd, env: p.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    const killGroup = (sig: NodeJS.Signals) => {
      try {
        if (child.pid) process.kill(-child.pid, sig);
      } catch {
        // already gone
      }
    };
    const release = trackResource('process', `agent ${p.file} (pid ${child.pid})`, () => killGroup('SIGKILL'));
    let graceTimer: NodeJS.Timeout | undefined;
    const onAbort = () => {
      killGroup('SIGTERM');
      graceTimer = setTimeout(() => killGroup('SIGKILL'), KILL_GRACE_MS);
    };
    if (p.signal.aborted) onAbort();
    else p.signal.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (chunk: Buffer) => reader.push(chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => stderr.push(chunk));
    child.stdin.on('error', () => {}); // a tool that never reads stdin closes it early
    child.stdin.end(p.stdin);
    let done = false;
    const finish = (spawnError: NodeJS.ErrnoException | null, code: number | null, signal: NodeJS.Signals | null) => {
      if (done) return;
      done = true;
      p.signal.removeEventListener('abort', onAbort);
      if (graceTimer) clearTimeout(graceTimer);
      release();
      const lines = stderr.lines();
      // In the agent sandbox bwrap starts the tool, and says so when it cannot: the same as a spawn that failed.
      resolve({ outcome: reader.end(), diagnostics: reader.diagnostics, code, signal, stderr: lines, spawnError: spawnError ?? sandboxStartError(code, lines), aborted: p.signal.aborted });
    };
    child.once('error', (err) => finish(err as NodeJS.ErrnoException, null, null));
    // The tool is done: what it left running in its group would go on in the worktree, or hold its output open.
    child.once('exit', () => killGroup('SIGKILL'));
    child.once('close', (code, signal) => finish(null, code, signal));
  });
}

/** Field readers for untyped events: a wrong type reads as absent, never as a crash. */
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
export const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
export const obj = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
/** One line for the board: the first line of a command or argument, cut at 120 characters. */
export const brief = (v: unknown): string | undefined => {
  const s = typeof v === 'string' ? v : v === undefined ? undefined : JSON.stringify(v);
  if (!s) return undefined;
  const first = s.split('\n')[0]!;
  return first.length > 120 ? `${first.slice(0, 119)}…` : first;
};
