/**
 * LineSplitter: byte chunks → complete lines, in linear time and bounded memory.
 *
 * A line inside one chunk is handed out as a view of that chunk (no copy). A
 * line that straddles chunks is carried as a list of pieces and joined once,
 * when its newline arrives: the old reader re-concatenated the whole partial
 * line on every chunk, so a 200 MB line cost 200 copies of up to 200 MB (195 s,
 * 677 MB peak). Joining once makes it one copy.
 *
 * A line longer than `maxLineBytes` is never held: once the carry passes the
 * limit the splitter keeps only its first `headBytes` and counts the rest, and
 * at the newline reports it through `onOversized` with its 1-based line number
 * and its size. The caller decides what that head is still good for (the
 * observer reads a tool result's id from it) and reports the line as skipped.
 * Memory is therefore bounded by maxLineBytes + one chunk, whatever the file.
 */

const NEWLINE = 0x0a;

/** 64 MiB: far above any real transcript line we have seen (the largest tool results are a few MiB). */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;
/** What is kept of an oversized line for the caller to classify. */
export const OVERSIZED_HEAD_BYTES = 64 * 1024;

export interface OversizedLine {
  /** 1-based over everything this splitter has seen. */
  line: number;
  /** The whole line's length in bytes (without the newline). */
  bytes: number;
  /** Its first headBytes bytes. */
  head: Buffer;
  /** Whether any of the `watch` patterns occurred anywhere in the line. */
  seen: boolean[];
}

export interface LineSplitterOptions {
  maxLineBytes?: number;
  headBytes?: number;
  /** Byte patterns looked for in an oversized line's dropped middle (e.g. `"is_error":true`). */
  watch?: readonly Buffer[];
}

export class LineSplitter {
  private pieces: Buffer[] = [];
  private carried = 0;
  /** Set while an oversized line is being skipped. */
  private oversized: { head: Buffer; bytes: number; seen: boolean[]; tail: Buffer } | null = null;
  private lineNo = 0;
  private readonly max: number;
  private readonly headBytes: number;
  private readonly watch: readonly Buffer[];
  private readonly overlap: number;

  constructor(options: LineSplitterOptions = {}) {
    this.max = options.maxLineBytes ?? MAX_LINE_BYTES;
    this.headBytes = Math.min(options.headBytes ?? OVERSIZED_HEAD_BYTES, this.max);
    this.watch = options.watch ?? [];
    this.overlap = Math.max(0, ...this.watch.map((w) => w.length - 1));
  }

  /** Lines handed out so far (complete lines, including oversized ones). */
  get lines(): number {
    return this.lineNo;
  }

  push(chunk: Buffer, onLine: (line: Buffer) => void, onOversized?: (line: OversizedLine) => void): void {
    let start = 0;
    if (this.carried || this.oversized) {
      const nl = chunk.indexOf(NEWLINE);
      const piece = nl < 0 ? chunk : chunk.subarray(0, nl);
      if (this.oversized) this.skipInto(piece);
      else if (this.carried + piece.length > this.max) this.startOversized(piece);
      else {
        this.pieces.push(Buffer.from(piece));
        this.carried += piece.length;
      }
      if (nl < 0) return;
      this.lineNo += 1;
      if (this.oversized) {
        const o = this.oversized;
        this.oversized = null;
        onOversized?.({ line: this.lineNo, bytes: o.bytes, head: o.head, seen: o.seen });
      } else {
        const line = this.pieces.length === 1 ? this.pieces[0]! : Buffer.concat(this.pieces, this.carried);
        this.pieces = [];
        this.carried = 0;
        onLine(line);
      }
      start = nl + 1;
    }
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, start);
      if (nl < 0) break;
      this.lineNo += 1;
      if (nl - start > this.max) {
        const line = chunk.subarray(start, nl);
        onOversized?.({ line: this.lineNo, bytes: line.length, head: Buffer.from(line.subarray(0, this.headBytes)), seen: this.watch.map((w) => line.indexOf(w) >= 0) });
      } else onLine(chunk.subarray(start, nl));
      start = nl + 1;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      if (rest.length > this.max) this.startOversized(rest);
      else {
        this.pieces.push(Buffer.from(rest));
        this.carried = rest.length;
      }
    }
  }

  /** The carry passed the limit: keep its head, note the watched patterns, drop the rest. */
  private startOversized(next: Buffer): void {
    // Only the head is copied out: joining the whole carry here would double the peak just to keep 64 KiB.
    const parts: Buffer[] = [];
    let have = 0;
    for (const p of [...this.pieces, next]) {
      if (have >= this.headBytes) break;
      const take = p.subarray(0, this.headBytes - have);
      parts.push(take);
      have += take.length;
    }
    const head = Buffer.concat(parts, have);
    this.oversized = { head, bytes: this.carried, seen: this.watch.map(() => false), tail: Buffer.alloc(0) };
    for (const p of this.pieces) this.skipInto(p, true);
    this.pieces = [];
    this.carried = 0;
    this.skipInto(next);
  }

  /** Counts a piece of an oversized line and looks for the watched patterns, across piece boundaries. */
  private skipInto(piece: Buffer, alreadyCounted = false): void {
    const o = this.oversized!;
    if (!alreadyCounted) o.bytes += piece.length;
    if (!this.watch.length) return;
    const hay = o.tail.length ? Buffer.concat([o.tail, piece]) : piece;
    this.watch.forEach((w, i) => {
      if (!o.seen[i] && hay.indexOf(w) >= 0) o.seen[i] = true;
    });
    o.tail = Buffer.from(hay.subarray(Math.max(0, hay.length - this.overlap)));
  }

  /** The bytes after the last newline: a torn line, or a file with no final newline (null when none or oversized). */
  get pending(): Buffer | null {
    if (this.oversized || !this.carried) return null;
    return this.pieces.length === 1 ? this.pieces[0]! : Buffer.concat(this.pieces, this.carried);
  }

  /** Size of a pending oversized line, when the file ends inside one. */
  get pendingOversizedBytes(): number {
    return this.oversized?.bytes ?? 0;
  }

  reset(): void {
    this.pieces = [];
    this.carried = 0;
    this.oversized = null;
    this.lineNo = 0;
  }
}
