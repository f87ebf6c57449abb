/**
 * Live updates for the web app: the ObserverService creates one emitter and
 * passes it to its hub, which publishes the bundles other processes write and
 * hands it to the session it follows; the daemon forwards each
 * `session.updated` to its WebSocket (README: "Live updates"). There is no
 * process-wide emitter: a session opened without one publishes nothing.
 */
import { EventEmitter } from 'node:events';

export interface ObserverUpdate {
  type: 'session.updated';
  sessionId: string;
  /** The bundle's flow revision after the update. */
  revision: number;
  explorationCount: number;
  runningExplorationId: string | null;
  at: number;
  /**
   * live: an ObserverSession in this process wrote the bundle (the daemon's
   * followed session); bundle: the hub saw a bundle written by another process
   * (a `maestro observe` beside Claude Code). Absent in older emitters.
   */
  source?: 'live' | 'bundle';
}

export interface ObserverEvents {
  on(event: 'update', listener: (update: ObserverUpdate) => void): this;
  off(event: 'update', listener: (update: ObserverUpdate) => void): this;
  emit(event: 'update', update: ObserverUpdate): boolean;
}

export class ObserverEventEmitter extends EventEmitter implements ObserverEvents {}
