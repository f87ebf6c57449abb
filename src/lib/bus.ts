/**
 * The daemon's in-process bus. Stored events (status changes, phases, …) reach
 * WebSocket clients through it; tokens, which are too many to store as
 * events, reach SSE subscribers through it straight from the ingestor.
 */
import { EventEmitter } from 'node:events';
import type { MaestroEvent } from '../core/types.js';

/** One streamed item of a task's current run, as SSE sends it. `id` is `<runId>:<seq>`. */
export interface StreamItem {
  id: string;
  taskId: string;
  runId: string;
  seq: number;
  kind: 'token' | 'phase' | 'clarify' | 'result' | 'error';
  data: Record<string, unknown>;
}

export class Bus {
  private readonly emitter = new EventEmitter();

  constructor() {
    // Every SSE / WebSocket client is a listener; fifty of each is normal.
    this.emitter.setMaxListeners(0);
  }

  publishEvent(e: MaestroEvent): void {
    this.emitter.emit('event', e);
  }

  /**
   * A stream item for the task's SSE subscribers. Items of this daemon's own
   * runs also go to `onLocalStream` listeners (the relay to other daemons);
   * `remote` items came from another daemon and are not relayed again.
   */
  publishStream(item: StreamItem, opts: { remote?: boolean } = {}): void {
    this.emitter.emit(`stream:${item.taskId}`, item);
    if (!opts.remote) this.emitter.emit('stream', item);
  }

  onLocalStream(fn: (item: StreamItem) => void): () => void {
    this.emitter.on('stream', fn);
    return () => this.emitter.off('stream', fn);
  }

  onEvent(fn: (e: MaestroEvent) => void): () => void {
    this.emitter.on('event', fn);
    return () => this.emitter.off('event', fn);
  }

  onStream(taskId: string, fn: (item: StreamItem) => void): () => void {
    this.emitter.on(`stream:${taskId}`, fn);
    return () => this.emitter.off(`stream:${taskId}`, fn);
  }
}
