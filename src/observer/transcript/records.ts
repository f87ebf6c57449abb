/**
 * The pure pieces of reading one Claude Code record (FORMATS §8.8): text
 * clean-up, tool phase, labels and previews, what a user text means, and a
 * fast parser for transcript timestamps. No state; the ExplorationCutter
 * (cutter.ts) keeps the state.
 */
import { clipOutsideMarkers, redactSecrets } from '../../core/redact.js';
import type { SessionEventKind, ToolPhase } from './types.js';

/** Caps that bound memory per node; the UI and digests never show more. */
export const RESPONSE_TEXT_CAP = 1_200;
export const LABEL_CAP = 80;
export const RESULT_PREVIEW = 60;

const VERIFY_WORDS = ['test', 'pytest', 'jest', 'mocha', 'lint', 'build', 'compile', 'run'];
const EXECUTE_TOOLS = new Set(['edit', 'write', 'multiedit', 'notebookedit']);
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;

export type Json = Record<string, unknown>;

export function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

export function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/** Whitespace that `\s+ → ' '` would change: any run of two, or any whitespace but a plain space. */
const UNCOLLAPSED = /[^\S ]|\s\s/;

export function collapse(text: string): string {
  // The checks skip the replacements (and their allocations) when they would change nothing.
  const plain = text.includes('\u001b') ? text.replace(ANSI, '') : text;
  return (UNCOLLAPSED.test(plain) ? plain.replace(/\s+/g, ' ') : plain).trim();
}

/** At most n characters, cut with `…`; never inside a `[redacted: <kind>]` marker. */
export function cap(text: string, n: number): string {
  return clipOutsideMarkers(text, n);
}

/**
 * Transcript text as the observer keeps it: secrets redacted (core/redact.ts) BEFORE
 * the cap, so a cap never leaves half a key behind a marker it no longer matches.
 * Only a window of 4 × the cap is looked at: enough for what the cap keeps.
 */
export function keep(text: string, n: number): string {
  return cap(redactSecrets(text.length > n * 4 ? text.slice(0, n * 4) : text), n);
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

export function toolFiles(input: unknown): string[] {
  if (!isObject(input)) return [];
  const file = str(input.file_path) || str(input.path) || str(input.notebook_path);
  return file ? [file] : [];
}

export function toolLabel(name: string, input: unknown): string {
  if (!isObject(input)) return name;
  const target = str(input.file_path) || str(input.notebook_path) || str(input.command) || str(input.pattern) || str(input.path) || str(input.url) || str(input.description);
  return cap(target ? `${name} ${keep(collapse(target), LABEL_CAP)}` : name, LABEL_CAP);
}

export function resultPreview(content: unknown): string {
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

/**
 * Session-level texts that are not questions: `/compact` (and Claude Code's
 * continuation summary that follows it, or an automatic compaction), and a
 * Stop hook's feedback that sends the agent back to work on the same turn.
 */
export type { SessionEventKind } from './types.js';

type Prompt =
  | { kind: 'question'; text: string; command?: string }
  | { kind: 'interrupt' }
  | { kind: 'session'; event: SessionEventKind; text: string }
  | { kind: 'none' };

const CONTINUATION = /^this session is being continued from a previous conversation/i;
const STOP_HOOK = /^stop hook feedback:/i;
const SESSION_COMMANDS: Record<string, SessionEventKind> = { '/compact': 'compact' };

/** What a user text means: a question, a slash command, an interruption, a session event, or nothing. */
export function classifyUserText(raw: string): Prompt {
  const text = redactSecrets(collapse(raw));
  if (!text) return { kind: 'none' };
  if (CONTINUATION.test(text)) return { kind: 'session', event: 'compact-summary', text: cap(text, 300) };
  if (STOP_HOOK.test(text)) return { kind: 'session', event: 'stop-hook', text: cap(text, 300) };
  if (text.toLowerCase().includes('request interrupted by user')) return { kind: 'interrupt' };
  const name = COMMAND_NAME.exec(text)?.[1] ?? '';
  const message = COMMAND_MESSAGE.exec(text)?.[1] ?? '';
  const command = name || (message ? (message.startsWith('/') ? message : `/${message}`) : '');
  if (command) {
    const args = COMMAND_ARGS.exec(text)?.[1] ?? '';
    const event = SESSION_COMMANDS[command.toLowerCase()];
    if (event) return { kind: 'session', event, text: args ? `${command} ${args}` : command };
    return { kind: 'question', text: args ? `${command} ${args}` : command, command };
  }
  if (OPERATIONAL.test(text)) return { kind: 'none' };
  return { kind: 'question', text };
}

export function firstUserText(content: unknown): string {
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

