/**
 * LogFile: the daemon's log file as a stream that never fails. A plain
 * fs.WriteStream emits 'error' on ENOSPC or EROFS, and an unhandled 'error'
 * ends the process: a full disk used to kill the daemon through its own log.
 * Here a failed write is handed to `onFault` (the health conditions), the line
 * is dropped, and the next write tries again; the first line that gets through
 * after a failure is preceded by a note of how many were lost.
 */
import { closeSync, mkdirSync, openSync, write } from 'node:fs';
import { dirname } from 'node:path';
import { Writable } from 'node:stream';

export class LogFile extends Writable {
  private fd: number;
  private dropped = 0;
  private lastError = '';

  constructor(
    readonly path: string,
    private readonly onFault: (err: NodeJS.ErrnoException) => void,
  ) {
    super({ decodeStrings: true });
    mkdirSync(dirname(path), { recursive: true });
    this.fd = openSync(path, 'a');
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    const data = this.dropped > 0 ? Buffer.concat([this.droppedNote(), chunk]) : chunk;
    this.writeAll(data, (err) => {
      if (err) {
        this.dropped++;
        this.lastError = err.code ?? err.message;
        this.onFault(err);
      } else {
        this.dropped = 0;
      }
      // Never an error: a log line lost is reported, the daemon goes on.
      done();
    });
  }

  /** fs.write may write part of a buffer when the disk is nearly full; the rest goes next, or fails. */
  private writeAll(data: Buffer, done: (err: NodeJS.ErrnoException | null) => void): void {
    write(this.fd, data, (err, written) => {
      if (err) done(err);
      else if (written < data.length) this.writeAll(data.subarray(written), done);
      else done(null);
    });
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    try {
      closeSync(this.fd);
    } catch {
      // already closed
    }
    done(err);
  }

  private droppedNote(): Buffer {
    const note = { level: 40, time: Date.now(), pid: process.pid, msg: `${this.dropped} log line(s) were lost while the log file could not be written (${this.lastError})` };
    return Buffer.from(`${JSON.stringify(note)}\n`);
  }
}
