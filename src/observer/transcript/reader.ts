/**
 * Reading transcripts from disk in bounded memory: fixed 1 MiB chunks, split
 * at newlines, each complete line handed to the ExplorationCutter. The tail
 * (TranscriptTail) keeps the byte offset and the bytes of a torn last line,
 * so a live file can be followed through appends, truncation and replacement.
 */
import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { ExplorationCutter } from './cutter.js';
import type { TranscriptState } from './types.js';

const CHUNK = 1 << 20;
const NEWLINE = 0x0a;

/**
 * Splits byte chunks into lines, carrying a partial last line to the next
 * chunk. Lines are handed out as Buffers — views into the chunk when the line
 * lies inside it — so the caller decides what to decode; a view is only valid
 * during the callback. Only a line that straddles two chunks is copied.
 */
export class LineSplitter {
  private carry: Buffer | null = null;

  push(chunk: Buffer, onLine: (line: Buffer) => void): void {
    let start = 0;
    if (this.carry) {
      const nl = chunk.indexOf(NEWLINE);
      if (nl < 0) {
        this.carry = Buffer.concat([this.carry, chunk]);
        return;
      }
      const line = Buffer.concat([this.carry, chunk.subarray(0, nl)]);
      this.carry = null;
      onLine(line);
      start = nl + 1;
    }
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, start);
      if (nl < 0) break;
      onLine(chunk.subarray(start, nl));
      start = nl + 1;
    }
    if (start < chunk.length) this.carry = Buffer.from(chunk.subarray(start));
  }

  /** The bytes after the last newline: a torn line, or a file with no final newline. */
  get pending(): string | null {
    return this.carry ? this.carry.toString('utf8') : null;
  }

  reset(): void {
    this.carry = null;
  }
}

export function sessionIdFromPath(path: string): string {
  return basename(path).replace(/\.jsonl$/i, '');
}

/**
 * Reads a whole transcript once. A last line without a newline is used when it
 * parses; when it does not, it is a torn write and is reported, not guessed at.
 */
export function readTranscriptFile(path: string, options: { sessionId?: string; now?: () => number } = {}): TranscriptState {
  const cutter = new ExplorationCutter(options.sessionId ?? sessionIdFromPath(path), options.now);
  const splitter = new LineSplitter();
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(CHUNK);
    for (;;) {
      const n = readSync(fd, buffer, 0, CHUNK, null);
      if (n <= 0) break;
      splitter.push(buffer.subarray(0, n), (line) => cutter.pushBytes(line));
    }
  } finally {
    closeSync(fd);
  }
  flushTail(cutter, splitter.pending);
  return cutter.state;
}

function flushTail(cutter: ExplorationCutter, pending: string | null): void {
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
  private readonly splitter = new LineSplitter();
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
    const fd = openSync(this.path, 'r');
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
        this.splitter.push(this.buffer.subarray(0, n), (line) => this.cutter.pushBytes(line));
      }
    } finally {
      closeSync(fd);
    }
    return { reset, changed: reset || this.cutter.revision !== before };
  }
}
