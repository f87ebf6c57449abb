import { fireEvent, render, screen, waitFor, cleanup } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KnowledgeScreen } from './KnowledgeScreen.js';
import { ObserverScreen } from './ObserverScreen.js';

// Unmount first: a component still mounted would run its effects against the real globals.
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

/** Answers by path; anything else is Fastify's 404. */
function serve(routes: Record<string, unknown>) {
  const asked: string[] = [];
  vi.stubGlobal('fetch', async (url: string) => {
    asked.push(url);
    const path = url.split('?')[0]!;
    if (path in routes) return new Response(JSON.stringify(routes[path]));
    return new Response(JSON.stringify({ error: { code: 'NOT_FOUND', message: `No route GET ${path}.` } }), { status: 404 });
  });
  return asked;
}

describe('KnowledgeScreen', () => {
  it('says knowledge search is not available when the daemon has no such route', async () => {
    serve({});
    render(<KnowledgeScreen view="search" />);
    fireEvent.change(screen.getByLabelText('Search the knowledge'), { target: { value: 'retry' } });
    fireEvent.click(screen.getByRole('button', { name: 'Search' }));
    expect((await screen.findByTestId('knowledge-unavailable')).textContent).toBe('Knowledge search is not available on this daemon.');
  });

  it('shows results with type facets, and narrows by a facet on the server', async () => {
    const asked = serve({
      '/api/knowledge/search': {
        query: 'retry', wikiCount: 2, codeCount: 1, typeCounts: { spec: 1, knowhow: 1, code: 1 }, count: 3,
        results: [
          { source: 'wiki', id: 'spec:project:coding:1', kind: 'spec', name: 'Retry with backoff', category: 'coding', score: 0.9, snippet: 'Use exponential backoff.' },
          { source: 'wiki', id: 'knowhow-retry', kind: 'knowhow', name: '<b>Retry</b> recipe', score: 0.5, selectionReason: 'diversity' },
          { source: 'code', id: 'code:src/retry.ts', kind: 'function', name: 'retry()', score: 0.4 },
        ],
      },
    });
    render(<KnowledgeScreen view="search" />);
    fireEvent.change(screen.getByLabelText('Search the knowledge'), { target: { value: 'retry' } });
    fireEvent.click(screen.getByRole('button', { name: 'Search' }));
    expect(await screen.findByText('3 results (2 wiki, 1 code)')).toBeTruthy();
    expect(screen.getByText('<b>Retry</b> recipe')).toBeTruthy(); // text, not markup
    expect(screen.getByText('diversity')).toBeTruthy();
    fireEvent.click(screen.getByLabelText('spec (1)'));
    await waitFor(() => expect(asked.at(-1)).toBe('/api/knowledge/search?q=retry&limit=30&type=spec'));
  });
});

describe('ObserverScreen', () => {
  it('lists sessions and shows a session as cards with knowledge, summary, the wiki badge and the flow graph', async () => {
    serve({
      '/api/observer/sessions': { sessions: [{ sessionId: 's1', isLast: true, load: { status: 'ok' }, explorationCount: 1, bundleUpdatedAt: 1, intent: { intentKey: 'k', nodeTitle: 'Fix the login', phase: 'build' } }] },
      '/api/observer/sessions/s1': {
        sessionId: 's1', load: { status: 'ok' }, intent: null, tokens: { input: 10, output: 20 },
        explorations: [{ id: 'exp_1', question: 'Why does login fail?', status: 'complete', toolCount: 3, errorCount: 0, toolSummary: 'Read×3', files: [], durationMs: 1500,
          knowledge: { entryId: 'e', relativePath: 'wiki/auth.md', type: 'note', excerpt: 'Tokens expire after 1 h.', score: 0.8, matchedKeywords: [] },
          summary: { text: 'The token had expired.', source: 'ai', status: 'ready' }, wiki: { status: 'saved', targetPath: 'wiki/login.md' } }],
        flow: { nodes: [{ id: 'n1', explorationId: 'exp_1', label: 'login', status: 'complete', metaBadges: { tools: 3, errors: 0, wiki: 'saved' } }], edges: [] },
      },
    });
    render(<ObserverScreen id="s1" />);
    expect(await screen.findByText('Fix the login')).toBeTruthy();
    expect(await screen.findByText('Why does login fail?')).toBeTruthy();
    expect(screen.getByText(/Tokens expire after 1 h\./)).toBeTruthy();
    expect(screen.getByText(/The token had expired\./)).toBeTruthy();
    expect(screen.getByText('wiki: saved')).toBeTruthy();
    expect(screen.getByRole('img', { name: 'Flow graph' })).toBeTruthy();
  });

  it('says the observer is not available on a daemon without its routes', async () => {
    serve({});
    render(<ObserverScreen />);
    expect(await screen.findByText('The observer is not available on this daemon.')).toBeTruthy();
  });
});
