/**
 * Observer API client (src/observer/http.ts). The shapes are the parts of
 * SessionView the screen reads; the server module pulls in Node-only code, so
 * its types are restated here narrowly rather than imported.
 */
import { ApiError, request } from './client.js';

export interface SessionSummary {
  sessionId: string;
  isLast: boolean;
  load: { status: string; reason?: string };
  explorationCount: number;
  bundleUpdatedAt: number | null;
  intent: { intentKey: string; nodeTitle: string; phase: string } | null;
}

export interface ExplorationCard {
  id: string;
  question: string;
  status: 'running' | 'complete' | 'interrupted';
  toolCount: number;
  errorCount: number;
  toolSummary: string;
  files: string[];
  durationMs: number | null;
  knowledge: { entryId: string; relativePath: string; type: string; excerpt: string; score: number; matchedKeywords: string[] } | null | undefined;
  summary: { text: string; source: 'ai' | 'fallback'; status: 'ready' | 'failed'; reason?: string } | null;
  wiki: { status: 'saved' | 'updated' | 'skipped' | 'failed'; reason?: string; targetPath?: string } | null;
}

export interface FlowGraph {
  nodes: { id: string; explorationId: string; label: string; status: string; metaBadges: { tools: number; errors: number; wiki: string } }[];
  edges: { from: string; to: string; relationship: string }[];
  focusNodeId?: string;
}

export interface SessionResponse {
  sessionId: string;
  load: { status: string; reason?: string; detail?: string };
  intent?: { intentKey: string; nodeTitle: string; phase: string } | null;
  explorations?: ExplorationCard[];
  tokens?: { input: number; output: number };
  flow?: FlowGraph | null;
  session?: null;
}

export const observer = {
  async sessions(): Promise<SessionSummary[] | null> {
    try {
      return (await request<{ sessions: SessionSummary[] }>('GET', '/api/observer/sessions')).sessions;
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return null;
      throw err;
    }
  },
  session: (id: string) => request<SessionResponse>('GET', `/api/observer/sessions/${encodeURIComponent(id)}`),
};
