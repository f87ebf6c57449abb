/**
 * Live updates for the web app: every ObserverSession emits on one emitter;
 * the daemon forwards `session.updated` to its WebSocket.
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
}

export interface ObserverEvents {
  on(event: 'update', listener: (update: ObserverUpdate) => void): this;
  off(event: 'update', listener: (update: ObserverUpdate) => void): this;
  emit(event: 'update', update: ObserverUpdate): boolean;
}

export class ObserverEventEmitter extends EventEmitter implements ObserverEvents {}

/** The process-wide emitter; a daemon subscribes once and forwards every update. */
export const observerEvents: ObserverEvents = new ObserverEventEmitter();
