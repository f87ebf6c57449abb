/**
 * Reading transcripts from disk in bounded memory: fixed 1 MiB chunks, split
 * at newlines in linear time (lib/lines.ts: a line past 64 MiB is reported
 * with its number and size, never held whole), each complete line handed to
 * the ExplorationCutter. The tail
 * (TranscriptTail) keeps the byte offset and the bytes of a torn last line,
 * so a live file can be followed through appends, truncation and replacement.
 */
import { closeSync, fstatSync, readSync, statSync } from 'node:fs';
import { openRegular } from '../../lib/regularFile.js';
import { basename } from 'node:path';
import { LineSplitter } from '../../lib/lines.js';
export { LineSplitter } from '../../lib/lines.js';
import { ExplorationCutter, OVERSIZED_WATCH } from './cutter.js';
import type { TranscriptState } from './types.js';

const CHUNK = 1 << 20;

/** A splitter that watches oversized lines for what the cutter still needs from them. */
function transcriptSplitter(maxLineBytes?: number): LineSplitter {
  return new LineSplitter({ watch: OVERSIZED_WATCH, ...(maxLineBytes ? { maxLineBytes } : {}) });
}

export function sessionIdFromPath(path: string): string {
  return basename(path).replace(/\.jsonl$/i, '');
}

/**
 * Reads a whole transcript once. A last line without a newline is used when it
 * parses; when it does not, it is a torn write and is reported, not guessed at.
 */
export function readTranscriptFile(path: string, options: { sessionId?: string; now?: () => number; maxLineBytes?: number } = {}): TranscriptState {
  const cutter = new ExplorationCutter(options.sessionId ?? sessionIdFromPath(path), options.now);
  const splitter = transcriptSplitter(options.maxLineBytes);
  const fd = openRegular(path);
  try {
    const buffer = Buffer.allocUnsafe(CHUNK);
    for (;;) {
      const n = readSync(fd, buffer, 0, CHUNK, null);
      if (n <= 0) break;
      splitter.push(buffer.subarray(0, n), (line) => cutter.pushBytes(line), (o) => cutter.pushOversized(o));
    }
  } finally {
    closeSync(fd);
  }
  flushTail(cutter, splitter);
  return cutter.state;
}

function flushTail(cutter: ExplorationCutter, splitter: LineSplitter): void {
  if (splitter.pendingOversizedBytes) {
    cutter.issue(cutter.state.lines + 1, `torn last line of ${splitter.pendingOversizedBytes} bytes (no newline, over the line limit); skipped`);
    return;
  }
  const pending = splitter.pending?.toString('utf8') ?? null;
  if (pending === null || !pending.trim()) return;
  try {
    JSON.parse(pending);
  } catch {
    cutter.issue(cutter.state.lines + 1, 'torn last line (no newline, not complete JSON); waiting for the rest');
    return;
  }
  cutter.pushLine(pending);
}

export interface TailUpdate {
  /** true when the file was truncated or replaced and parsing restarted from byte 0. */
  reset: boolean;
  changed: boolean;
}

/**
 * Follows a live transcript. `poll()` reads whatever was appended since the
 * last call; the caller decides when to call it (fs.watch events, a timer).
 * Truncation (size below the offset) and replacement (a new inode) restart the
 * parse from scratch so explorations never mix two files' contents.
 */
export class TranscriptTail {
  private cutter: ExplorationCutter;
  private readonly splitter = transcriptSplitter();
  private offset = 0;
  private ino = -1;
  private readonly buffer = Buffer.allocUnsafe(CHUNK);

  constructor(
    readonly path: string,
    readonly sessionId: string = sessionIdFromPath(path),
    private readonly now: () => number = Date.now,
  ) {
    this.cutter = new ExplorationCutter(sessionId, now);
  }

  get state(): TranscriptState {
    return this.cutter.state;
  }

  get revision(): number {
    return this.cutter.revision;
  }

  get bytesRead(): number {
    return this.offset;
  }

  poll(): TailUpdate {
    let stat;
    try {
      stat = statSync(this.path);
    } catch {
      return { reset: false, changed: false };
    }
    let reset = false;
    if ((this.ino !== -1 && stat.ino !== this.ino) || stat.size < this.offset) {
      this.cutter = new ExplorationCutter(this.sessionId, this.now);
      this.splitter.reset();
      this.offset = 0;
      reset = true;
    }
    this.ino = stat.ino;
    if (stat.size === this.offset) return { reset, changed: reset };
    const before = this.cutter.revision;
    const fd = openRegular(this.path);
    try {
      // The inode may have changed between stat and open; trust the descriptor.
      const fdStat = fstatSync(fd);
      if (fdStat.ino !== this.ino) {
        this.ino = fdStat.ino;
        this.cutter = new ExplorationCutter(this.sessionId, this.now);
        this.splitter.reset();
        this.offset = 0;
        reset = true;
      }
      for (;;) {
        const n = readSync(fd, this.buffer, 0, CHUNK, this.offset);
        if (n <= 0) break;
        this.offset += n;
        this.splitter.push(this.buffer.subarray(0, n), (line) => this.cutter.pushBytes(line), (o) => this.cutter.pushOversized(o));
      }
    } finally {
      closeSync(fd);
    }
    return { reset, changed: reset || this.cutter.revision !== before };
  }
}
