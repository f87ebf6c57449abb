/**
 * Observer API client (src/api/routes/observer.ts). The shapes are the server's own
 * (type-only imports: nothing of the server is bundled), so a change there
 * breaks this build instead of the screen. Live updates arrive on the
 * WebSocket (stores/observer.ts).
 */
import { ApiError, request } from './client.js';
import type { ObserverSessionResponse, ProposalsResponse, SessionSummary } from '../../../src/api/routes/observer.js';
import type { Proposal } from '../../../src/observer/curation/proposals.js';
import type { ExplorationView } from '../../../src/observer/view.js';
import type { FlowGraph } from '../../../src/observer/bundle/types.js';

export type { ExplorationView, FlowGraph, ObserverSessionResponse, Proposal, ProposalsResponse, SessionSummary };

export const observer = {
  /** null: this daemon has no observer routes. */
  async sessions(): Promise<SessionSummary[] | null> {
    try {
      return (await request<{ sessions: SessionSummary[] }>('GET', '/api/observer/sessions')).sessions;
    } catch (err) {
      if (err instanceof ApiError && err.status === 404 && err.code === 'NOT_FOUND') return null;
      throw err;
    }
  },
  session: (id: string) => request<ObserverSessionResponse>('GET', `/api/observer/sessions/${encodeURIComponent(id)}`),
  proposals: () => request<ProposalsResponse>('GET', '/api/observer/proposals'),
  /** The person's decision on a curation proposal: accept applies it to its entry, dismiss drops it. */
  decide: (id: string, decision: 'accept' | 'dismiss') => request<{ proposal: Proposal }>('POST', `/api/observer/proposals/${encodeURIComponent(id)}/${decision}`, {}),
};
