/** The WebSocket connection's state, shown in the banner ("reconnecting…"). */
import { create } from 'zustand';
import type { FeedState } from '../api/ws.js';

interface ConnectionState {
  state: FeedState;
  /** Set when the feed came back after a drop: the board reloads and says so. */
  reconnectedAt: number | null;
  setState(state: FeedState, reconnected: boolean): void;
}

export const useConnection = create<ConnectionState>((set) => ({
  state: 'connecting',
  reconnectedAt: null,
  setState: (state, reconnected) => set(reconnected ? { state, reconnectedAt: Date.now() } : { state }),
}));
