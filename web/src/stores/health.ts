/** The daemon's health conditions (a full disk, a read-only home) and how it runs agents, shown in the banner. */
import { create } from 'zustand';
import { api } from '../api/client.js';
import type { MaestroEvent } from '../api/types.js';

export interface HealthCondition {
  code: string;
  path: string;
  message: string;
  since: number;
}

/** How the daemon runs agents: in the bwrap sandbox, or as its user (and why). Unknown until the first answer. */
export interface AgentSandbox {
  kind: 'bwrap' | 'off';
  reason: string | null;
  unintended: boolean;
  /** In the sandbox: why abstract sockets made outside it (an X11 display's) stay reachable; null or absent: they do not. */
  sockets?: string | null;
  /** In the sandbox: its network (agentSandbox.network); absent from an older daemon. */
  network?: 'shared' | 'proxied' | 'none';
}

interface HealthState {
  conditions: HealthCondition[];
  agentSandbox: AgentSandbox | null;
  /** Asks the daemon (on start and after a reconnect); an unreachable daemon is the connection line's business. */
  load(): Promise<void>;
  /** Takes a `daemon.health` event from the feed; false for any other event. */
  apply(e: MaestroEvent): boolean;
}

export const useHealth = create<HealthState>((set) => ({
  conditions: [],
  agentSandbox: null,
  async load() {
    try {
      const report = await api.health();
      set({ conditions: report.conditions ?? [], agentSandbox: report.agentSandbox ?? null });
    } catch {
      // unreachable: the banner already says so
    }
  },
  apply(e) {
    if (e.type !== 'daemon.health') return false;
    const conditions = (e.payload as { conditions?: HealthCondition[] }).conditions;
    set({ conditions: Array.isArray(conditions) ? conditions : [] });
    return true;
  },
}));
