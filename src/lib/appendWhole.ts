/**
 * The one append of a record to a line file: in one `write` on an O_APPEND descriptor, all or nothing. A full disk
 * takes what fits and then fails (ENOSPC): the part written is taken off again, else the next record, once there is
 * room, would be glued to it (a line that is not JSON, a log heading run into the last one's text) and lost with
 * it. Not when another writer appended since (the file is then longer than this record's part): cutting would take
 * theirs. Used by the run files (outbox.ndjson, transcript.jsonl), the knowledge audit log and the wiki's daily log.
 */
import { closeSync, fstatSync, ftruncateSync, openSync, writeSync } from 'node:fs';

/** Appends `text` to `path` (made when missing); returns the file's size before, where the record starts. */
export function appendWhole(path: string, text: string | Buffer): number {
  const data = typeof text === 'string' ? Buffer.from(text) : text;
  const fd = openSync(path, 'a');
  try {
    const start = fstatSync(fd).size;
    let written = 0;
    try {
      // One write is enough for regular files; the loop only covers a short write.
      while (written < data.length) written += writeSync(fd, data, written, data.length - written);
    } catch (err) {
      if (written > 0 && fstatSync(fd).size === start + written) ftruncateSync(fd, start);
      throw err;
    }
    return start;
  } finally {
    closeSync(fd);
  }
}
