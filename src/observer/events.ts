/**
 * Live updates for the web app: every ObserverSession emits on one emitter,
 * and so does the daemon's ObserverHub for bundles other processes write; the
 * daemon forwards each `session.updated` to its WebSocket (README: "Live updates").
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

/** The process-wide emitter; a daemon subscribes once and forwards every update. */
export const observerEvents: ObserverEvents = new ObserverEventEmitter();
