/**
 * An opt-in file watcher for the reconciliation corpus, for long-lived
 * processes (the daemon): with it, an incremental corpus read stats only the
 * files that changed instead of every file (corpusDocs.ts).
 *
 * The watcher runs `fs.watch` (inotify) in a worker thread, whose event loop
 * keeps turning while this thread runs synchronous code. A read asks it for a
 * barrier and waits (Atomics.wait) for the answer. The worker answers after
 * two `setImmediate` hops, i.e. after a full poll phase that began after the
 * request arrived; the kernel queues an inotify event during the write
 * syscall itself, so every write that finished before the read began is in
 * the answer — from this process or any other. If the worker does not answer
 * in time, fails, or a directory was replaced, the read falls back to the full
 * stat walk: the watcher only ever saves work, it is never trusted alone.
 */
import { MessageChannel, Worker, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { trackResource } from '../../../lib/resources.js';

const WORKER_JS = `
const { workerData } = require('node:worker_threads');
const { watch } = require('node:fs');
const { join } = require('node:path');
const { ack, port, dirs } = workerData;
let dirty = new Set();
let broken = false;
for (const d of dirs) {
  try {
    const w = watch(d, { persistent: true }, (_ev, name) => { if (name) dirty.add(join(d, String(name))); else broken = true; });
    w.on('error', () => { broken = true; });
  } catch { broken = true; }
}
port.on('message', (seq) => {
  setImmediate(() => setImmediate(() => {
    port.postMessage({ seq, dirty: [...dirty], broken });
    dirty = new Set();
    Atomics.store(ack, 0, seq);
    Atomics.notify(ack, 0);
  }));
});
Atomics.store(ack, 0, -1);
Atomics.notify(ack, 0);
`;

export interface WatchAnswer {
  /** Absolute paths named by events since the previous answer. */
  dirty: Set<string>;
}

/** How long a read waits for the watcher before doing the full stat walk instead. */
const ANSWER_MS = 2000;
const START_MS = 5000;

export class CorpusWatch {
  private readonly ack = new Int32Array(new SharedArrayBuffer(4));
  private readonly port: MessagePort;
  private readonly worker: Worker;
  private seq = 0;
  private dead = false;
  private readonly startBy: number;
  /** Set when an answer was missed: the next answer is incomplete and must not be trusted. */
  private lost = false;
  /** Registered while the thread may run: the leak check names a watcher nobody closed. */
  private readonly untrack: () => void;

  constructor(readonly dirs: string[]) {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.worker = new Worker(WORKER_JS, { eval: true, execArgv: [], workerData: { ack: this.ack, port: port2, dirs }, transferList: [port2] });
    this.worker.unref();
    this.port.unref();
    this.worker.on('error', () => (this.dead = true));
    this.worker.on('exit', () => (this.dead = true));
    this.untrack = trackResource('watcher', `corpus watcher thread (${dirs[0] ?? ''})`, () => this.close());
    this.startBy = Date.now() + START_MS;
  }

  /**
   * Blocks until the thread has its watches in place (true), or START_MS have passed since it was
   * created (false: it is closed). Optional: until then `changes()` answers null without waiting,
   * so a daemon never stalls on a thread start (30–60 ms, four projects' first runs in bench:daemon).
   */
  waitStarted(): boolean {
    if (!this.dead) Atomics.wait(this.ack, 0, 0, Math.max(0, this.startBy - Date.now()));
    return this.isStarted();
  }

  /** The thread moves the ack word off 0 once its watches are in place (-1, then each answer's seq). */
  private isStarted(): boolean {
    if (this.dead) return false;
    if (Atomics.load(this.ack, 0) !== 0) return true;
    if (Date.now() > this.startBy) void this.close();
    return false;
  }

  /** Files changed since the last answer, or null: then the caller must stat everything. */
  changes(): WatchAnswer | null {
    // Not started yet: its watches may not be in place, so nothing it could say is complete.
    if (!this.isStarted()) return null;
    const seq = ++this.seq;
    this.port.postMessage(seq);
    const deadline = Date.now() + ANSWER_MS;
    while (Atomics.load(this.ack, 0) !== seq) {
      const left = deadline - Date.now();
      if (left <= 0) {
        this.lost = true;
        return null;
      }
      Atomics.wait(this.ack, 0, Atomics.load(this.ack, 0), left);
    }
    const dirty = new Set<string>();
    let broken = false;
    let complete = false;
    for (let m = receiveMessageOnPort(this.port); m; m = receiveMessageOnPort(this.port)) {
      const a = m.message as { seq: number; dirty: string[]; broken: boolean };
      for (const d of a.dirty) dirty.add(d);
      broken ||= a.broken;
      if (a.seq === seq) complete = true;
    }
    if (broken) {
      this.close();
      return null;
    }
    if (!complete || this.lost) {
      // An earlier answer went unread: what it held is in this drain too, but start clean anyway.
      this.lost = false;
      return null;
    }
    return { dirty };
  }

  get alive(): boolean {
    return !this.dead;
  }

  /** Ends the thread; the promise settles when it has exited. Idempotent. */
  close(): Promise<number> {
    this.dead = true;
    this.untrack();
    this.port.close();
    return this.worker.terminate();
  }
}
