/**
 * Observer API client (src/api/routes/observer.ts). Each answer is the
 * `z.output` of the response schema its route declares
 * (src/api/wire/observer.ts; a type-only import: nothing of the server is
 * bundled), so a change there breaks this build instead of the screen. Live
 * updates arrive on the WebSocket (stores/observer.ts).
 */
import { ApiError, request } from './client.js';
import type { ExplorationView, FlowGraph, ObserverSessionResponse, Proposal, ProposalAccept, ProposalDismiss, ProposalsResponse, SessionList, SessionSummary } from '../../../src/api/wire/observer.js';

export type { ExplorationView, FlowGraph, ObserverSessionResponse, Proposal, ProposalsResponse, SessionSummary };

export const observer = {
  /** null: this daemon has no observer routes. */
  async sessions(): Promise<SessionSummary[] | null> {
    try {
      return (await request<SessionList>('GET', '/api/observer/sessions')).sessions;
    } catch (err) {
      if (err instanceof ApiError && err.status === 404 && err.code === 'NOT_FOUND') return null;
      throw err;
    }
  },
  session: (id: string) => request<ObserverSessionResponse>('GET', `/api/observer/sessions/${encodeURIComponent(id)}`),
  proposals: () => request<ProposalsResponse>('GET', '/api/observer/proposals'),
  /** The person's decision on a curation proposal: accept applies it to its entry, dismiss drops it. */
  decide: <D extends 'accept' | 'dismiss'>(id: string, decision: D) => request<D extends 'accept' ? ProposalAccept : ProposalDismiss>('POST', `/api/observer/proposals/${encodeURIComponent(id)}/${decision}`, {}),
};
