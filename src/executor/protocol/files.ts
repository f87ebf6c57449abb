/**
 * The two ways the run-directory files are written, and the one way they are read.
 *
 * - Whole-file JSON (job.json, inbox.json, stages.json) goes through the one
 *   atomic write (src/lib/atomicWrite.ts), so a reader sees the old file or the
 *   new one, never half of one.
 * - Line files (outbox.ndjson, transcript.jsonl) are appended one complete line
 *   per `write` call on an O_APPEND descriptor. A crash can still cut the last
 *   line short, so readers only consume lines that end in "\n" and report the
 *   byte offset just past the last whole line: the torn tail is read again, whole,
 *   once the writer (or its successor) finishes it.
 */
import { closeSync, existsSync, openSync, fstatSync, readSync, ftruncateSync } from 'node:fs';
import { appendWhole } from '../../lib/appendWhole.js';
import { writeFileAtomic, writeFileAtomicOffLoop } from '../../lib/atomicWrite.js';
import { openRegular, readRegularFile } from '../../lib/regularFile.js';
import { LineSplitter } from '../../lib/lines.js';
import { notJsonMessage } from '../../lib/jsonError.js';

/** Whole-file JSON through the one atomic write (fsynced: stages.json is what a restarted worker trusts). */
export function writeJsonAtomic(path: string, value: unknown): void {
  writeFileAtomic(path, JSON.stringify(value, null, 2) + '\n');
}

/** writeJsonAtomic with its fsyncs off the event loop (lib/atomicWrite.ts writeFileAtomicOffLoop): for the daemon, on a file only it writes. */
export function writeJsonAtomicOffLoop(path: string, value: unknown): Promise<void> {
  return writeFileAtomicOffLoop(path, JSON.stringify(value, null, 2) + '\n');
}

/**
 * A whole-file JSON run file (job.json, inbox.json, stages.json). One that does not parse is named with the place
 * it goes wrong and nothing else, and no cause: JSON.parse's message quotes the start of the file, and the error
 * reaches the run's outbox, the daemon's log and the board (a job.json that is a link to a key would show it).
 */
export function readJsonFile(path: string): unknown {
  const text = readRegularFile(path);
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(notJsonMessage(path, text));
  }
}

/** Appends one JSON value as one line, all or nothing (lib/appendWhole.ts: a full disk leaves no part of it). */
export function appendJsonLine(path: string, value: unknown): void {
  appendWhole(path, JSON.stringify(value) + '\n');
}

export interface JsonLines<T> {
  records: T[];
  /** Each record's 1-based line number in this read. */
  lines: number[];
  /** Each record's byte offset in the file: where its line starts (what a report names, and where a reader stands before it). */
  offsets: number[];
  /** Byte offset just past the last complete line; pass it back to continue. */
  nextOffset: number;
  /** Lines that were complete but not valid JSON, with their 1-based line number in this read (text capped). */
  corrupt: Array<{ line: number; text: string }>;
  /** Lines longer than the limit (lib/lines.ts MAX_LINE_BYTES): skipped, with their line number in this read and size. */
  oversized?: Array<{ line: number; bytes: number }>;
  /** True when the read stopped at `maxBytes` with whole lines left after nextOffset: read again from there. */
  more?: boolean;
}

const READ_CHUNK = 1 << 20;
/** What a corrupt line keeps of its text for the log. */
const CORRUPT_TEXT_CAP = 2_000;

/**
 * Reads complete lines from `offset` on, in 1 MiB chunks (linear time; memory
 * bounded by the records plus one line, however long the file). A last line
 * without "\n" is torn (still being written) and left for later; a line past
 * `maxLineBytes` is skipped and reported in `oversized`, never held whole.
 */
export function readJsonLines<T = unknown>(path: string, offset = 0, options: { maxLineBytes?: number; maxBytes?: number } = {}): JsonLines<T> {
  if (!existsSync(path)) return { records: [], lines: [], offsets: [], nextOffset: offset, corrupt: [] };
  const records: T[] = [];
  const lines: number[] = [];
  const offsets: number[] = [];
  const corrupt: Array<{ line: number; text: string }> = [];
  const oversized: Array<{ line: number; bytes: number }> = [];
  const splitter = new LineSplitter(options.maxLineBytes ? { maxLineBytes: options.maxLineBytes } : {});
  let consumed = 0;
  let more = false;
  const fd = openRegular(path);
  try {
    const size = fstatSync(fd).size;
    if (size <= offset) return { records: [], lines: [], offsets: [], nextOffset: offset, corrupt: [] };
    const buf = Buffer.allocUnsafe(Math.min(READ_CHUNK, size - offset));
    for (let pos = offset; pos < size; ) {
      // `maxBytes`: a read stops once past it with a whole line read (a longer line is read to its end, or skipped).
      if (options.maxBytes && pos - offset >= options.maxBytes && consumed > 0) {
        more = true;
        break;
      }
      const n = readSync(fd, buf, 0, Math.min(buf.length, size - pos), pos);
      if (n <= 0) break;
      pos += n;
      splitter.push(
        buf.subarray(0, n),
        (bytes) => {
          const start = offset + consumed;
          consumed += bytes.length + 1;
          const text = bytes.toString('utf8');
          if (!text.trim()) return;
          try {
            records.push(JSON.parse(text) as T);
            lines.push(splitter.lines);
            offsets.push(start);
          } catch {
            corrupt.push({ line: splitter.lines, text: text.length > CORRUPT_TEXT_CAP ? `${text.slice(0, CORRUPT_TEXT_CAP)}…` : text });
          }
        },
        (o) => {
          consumed += o.bytes + 1;
          oversized.push({ line: o.line, bytes: o.bytes });
        },
      );
    }
  } finally {
    closeSync(fd);
  }
  return { records, lines, offsets, nextOffset: offset + consumed, corrupt, ...(oversized.length ? { oversized } : {}), ...(more ? { more } : {}) };
}

/**
 * Cuts a torn last line (a writer killed mid-write) off a line file, so the
 * next append starts on a fresh line instead of gluing itself to the fragment.
 * Only a new writer calls this, after the old one is gone; readers never
 * consumed the fragment because it had no "\n".
 */
export function repairTornTail(path: string): boolean {
  if (!existsSync(path)) return false;
  const fd = openSync(path, 'r+');
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return false;
    const last = Buffer.alloc(1);
    readSync(fd, last, 0, 1, size - 1);
    if (last[0] === 0x0a) return false;
    // Scan back in chunks for the last newline.
    const chunk = Buffer.alloc(64 * 1024);
    let end = size;
    while (end > 0) {
      const start = Math.max(0, end - chunk.length);
      const n = readSync(fd, chunk, 0, end - start, start);
      const i = chunk.subarray(0, n).lastIndexOf(0x0a);
      if (i >= 0) {
        ftruncateSync(fd, start + i + 1);
        return true;
      }
      end = start;
    }
    ftruncateSync(fd, 0);
    return true;
  } finally {
    closeSync(fd);
  }
}
