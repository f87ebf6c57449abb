/** The WebSocket connection's state, shown in the banner ("reconnecting…"), and whether the daemon refused this browser's token. */
import { create } from 'zustand';
import type { FeedState } from '../api/ws.js';

interface ConnectionState {
  state: FeedState;
  /** The daemon answered 401: this browser has no token (the board was opened without the link `maestro serve` printed). */
  unauthorized: boolean;
  setUnauthorized(value: boolean): void;
  /** Set when the feed came back after a drop: the board reloads and says so. */
  reconnectedAt: number | null;
  setState(state: FeedState, reconnected: boolean): void;
}

export const useConnection = create<ConnectionState>((set) => ({
  state: 'connecting',
  unauthorized: false,
  setUnauthorized: (unauthorized) => set({ unauthorized }),
  reconnectedAt: null,
  setState: (state, reconnected) => set(reconnected ? { state, reconnectedAt: Date.now() } : { state }),
}));
