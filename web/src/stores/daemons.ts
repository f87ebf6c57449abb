/**
 * The daemons sharing the database (GET /api/daemons), as `maestro daemons` lists them. Loaded at start and again
 * while the daemons screen is open (a heartbeat is no event of the live feed). With one daemon (the SQLite default)
 * the board says nothing of daemons: the screen's link and the runs' daemon column appear once another daemon
 * shares the database, or a run was another daemon's.
 */
import { create } from 'zustand';
import { api } from '../api/client.js';
import type { DaemonList } from '../api/types.js';

interface DaemonsState {
  list: DaemonList | null;
  /** When the list was read, by this browser's clock: "last heard" ages are as of then. */
  readAt: number | null;
  error: string | null;
  load(): Promise<void>;
}

export const useDaemons = create<DaemonsState>((set) => ({
  list: null,
  readAt: null,
  error: null,
  async load() {
    try {
      set({ list: await api.daemons(), readAt: Date.now(), error: null });
    } catch (err) {
      set({ error: (err as Error).message });
    }
  },
}));

/** Whether the board speaks of daemons: another one shares the database. */
export function severalDaemons(list: DaemonList | null): boolean {
  return (list?.daemons.filter((d) => !d.self).length ?? 0) > 0;
}
