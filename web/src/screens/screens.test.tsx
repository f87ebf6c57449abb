import { act, fireEvent, render, screen, waitFor, cleanup } from '@testing-library/react';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KnowledgeScreen } from './KnowledgeScreen.js';
import { MetricsScreen } from './MetricsScreen.js';
import { ObserverScreen } from './ObserverScreen.js';
import { useProjects } from '../stores/projects.js';
import { useObserverFeed } from '../stores/observer.js';
import styles from './Screens.module.css';
import { setLanguage } from '../i18n/index.js';

// Unmount first: a component still mounted would run its effects against the real globals.
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

/** Answers by path (or `POST <path>`); a function answers from the request body; anything else is Fastify's 404. */
function serve(routes: Record<string, unknown>, sent: Array<{ method: string; url: string; body: unknown }> = []) {
  const asked: string[] = [];
  vi.stubGlobal('fetch', async (url: string, init?: RequestInit) => {
    asked.push(url);
    const method = init?.method ?? 'GET';
    const body = init?.body ? JSON.parse(String(init.body)) : undefined;
    sent.push({ method, url, body });
    const path = url.split('?')[0]!;
    const key = method === 'GET' ? path : `${method} ${path}`;
    if (key in routes) {
      const r = routes[key];
      const answer = typeof r === 'function' ? (r as (b: unknown) => { status?: number; json: unknown })(body) : { json: r };
      return new Response(JSON.stringify(answer.json), { status: answer.status ?? 200 });
    }
    return new Response(JSON.stringify({ error: { code: 'NOT_FOUND', message: `No route ${method} ${path}.` } }), { status: 404 });
  });
  return asked;
}

useProjects.setState({ selectedId: 'p1' });

describe('KnowledgeScreen', () => {
  it('says knowledge search is not available when the daemon has no such route', async () => {
    serve({});
    render(<KnowledgeScreen view="search" />);
    fireEvent.change(screen.getByLabelText('Search the knowledge'), { target: { value: 'retry' } });
    fireEvent.click(screen.getByRole('button', { name: 'Search' }));
    expect((await screen.findByTestId('knowledge-unavailable')).textContent).toBe('This part of the knowledge is not available on this daemon.');
  });

  it('says how each empty knowledge screen gets filled: search, review queue, audit', async () => {
    serve({
      '/api/knowledge/search': { query: 'zz', wikiCount: 0, codeCount: 0, typeCounts: {}, count: 0, results: [], noMatch: 'No entry matches "zz": no entry holds enough of its words.' },
      '/api/knowledge/review': { projectId: 'p1', sessions: [] },
      '/api/knowledge/audit': {
        schema: 'knowledge-audit/1.0', scope: 'all', generated_at: '2026-12-01T00:00:00.000Z',
        spec_health: { total: 0, active: 0, deprecated: 0, findings: 0 }, knowhow: { total: 0, active: 0, deprecated: 0, invalid: 0 },
        usage: { consumed_total: 0, distinct: 0, top10_share: 0, gini: 0 }, pipeline: { sessions: 0, ledgers: 0, pending_observed: 0, pending_corroborated: 0, promoted: 0 },
        findings: [], prune_plan: [], applied: { count: 0, backup_dir: null }, safety: {},
      },
    });
    const { unmount } = render(<KnowledgeScreen view="search" />);
    expect(screen.getByTestId('knowledge-search-hint').textContent).toMatch(/fills as agents report decisions and constraints.*maestro spec add/);
    fireEvent.change(screen.getByLabelText('Search the knowledge'), { target: { value: 'zz' } });
    fireEvent.click(screen.getByRole('button', { name: 'Search' }));
    expect(await screen.findByText('No entry matches "zz": no entry holds enough of its words.')).toBeTruthy();
    unmount();
    const review = render(<KnowledgeScreen view="review" />);
    expect((await screen.findByTestId('review-empty')).textContent).toMatch(/when an agent's run report \(\.maestro\/report\.md\) lists accepted decisions or locked constraints/);
    review.unmount();
    render(<KnowledgeScreen view="audit" />);
    expect((await screen.findByTestId('audit-empty')).textContent).toMatch(/No specs or knowhow yet.*Promote candidates under Review/);
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
    expect(await screen.findByText('3 results (2 knowledge, 1 code)')).toBeTruthy();
    expect(screen.getByText('<b>Retry</b> recipe')).toBeTruthy(); // text, not markup
    expect(screen.getByText('diversity')).toBeTruthy();
    fireEvent.click(screen.getByLabelText('spec (1)'));
    await waitFor(() => expect(asked.at(-1)).toBe('/api/knowledge/search?projectId=p1&q=retry&limit=30&type=spec'));
  });

  it('shows an entry with its evolution chain: what it supersedes and what superseded it', async () => {
    serve({
      '/api/knowledge/entries/S-2': {
        id: 'spec:project:c-002', sid: 'S-2', kind: 'spec', type: 'spec', category: 'coding', tags: ['retry'], title: 'Retry twice', summary: '', body: '<b>Retry</b> at most twice.',
        status: 'deprecated', declaredStatus: 'deprecated', date: '2026-02-01', supersedes: ['S-1'], supersededBy: 'S-3', neighbors: [{ rel: 'related', direction: 'out', id: 'tip-x', resolved: true }],
        aliases: [], graphId: 'g', scope: 'project', workspace: null, confidence: null, file: '/x', line: 1, family: 'f', related: [], references: [],
      },
    });
    render(<KnowledgeScreen view="entry" id="S-2" />);
    const chain = await screen.findByRole('list', { name: 'Evolution' });
    expect([...chain.querySelectorAll('li')].map((li) => li.textContent)).toEqual(['Supersedes: S-1', 'spec:project:c-002 (this entry)', 'Superseded by: S-3']);
    expect(screen.getByText('<b>Retry</b> at most twice.')).toBeTruthy();
    expect(screen.getByRole('link', { name: 'S-3' }).getAttribute('href')).toBe('#/knowledge/entry/S-3');
    expect(screen.getByRole('link', { name: 'tip-x' })).toBeTruthy();
  });

  const candidate = (over: Record<string, unknown> = {}) => ({
    candidate_id: 'KDC-0123456789abcdef', source_run: 'session', target: 'spec', action: 'propose', title: '<i>Queues</i> drain first', status: 'pending', source_kind: 'manual',
    content: 'Queues drain first.\nThen\u202e the workers stop.', category: 'coding',
    occurrences: 1, first_recorded_at: null, corroboration: 1, receipt: 'fresh', disposition: 'related', promotion_eligibility: 'eligible', canonical_id: 'S-1', canonical_status: 'active',
    matches: [{ knowledge_id: 'S-1', target: 'spec', title: 'Shutdown order', relation: 'related', scores: { lexical: 0.4, semantic: 0, title: 0.1, relation: 0.5, stance: 0, composite: 0.42 }, novelty: 0.5, evidence: ['shared: queue, drain'], target_content_hash: 'h', source_path: 'specs/a.md', source_line: 3 }],
    resolution: null, promote_command: null, ...over,
  });
  const queue = (c: object | object[], sources: object[] = [{ run_id: 'session', receipt: 'fresh', reasons: [] }]) => ({ projectId: 'p1', sessions: [{ session_id: 'task-1', objective: 'teach', status: 'open', review: { schema: 'knowledge-review/1.0', session_id: 'task-1', sources, candidates: Array.isArray(c) ? c : [c], triage: [], input_totals_by_source: {}, inputs: [] } }] });

  it('shows a code symbol a search found (a code-graph node, not an entry): its file, signature and symbols', async () => {
    serve({
      '/api/knowledge/entries/file%3Asrc%2Fretry.ts': {
        id: 'file:src/retry.ts', kind: 'file', name: 'src/retry.ts', filePath: 'src/retry.ts', line: null, signature: '',
        symbols: [{ id: 'code:src/retry.ts#retry', name: 'retry', kind: 'function', line: 3 }], imports: [], importedBy: [],
      },
    });
    render(<KnowledgeScreen view="entry" id="file:src/retry.ts" />);
    const card = await screen.findByTestId('knowledge-entry');
    expect(card.querySelector('h2')!.textContent).toBe('src/retry.ts');
    expect(screen.getByRole('link', { name: 'code:src/retry.ts#retry' }).getAttribute('href')).toBe('#/knowledge/entry/code%3Asrc%2Fretry.ts%23retry');
  });

  it('shows the review queue with matches and evidence; resolving needs a reason, then sends what the server validates', async () => {
    const sent: Array<{ method: string; url: string; body: unknown }> = [];
    serve({
      '/api/knowledge/review': queue(candidate()),
      'POST /api/knowledge/review/task-1/resolve': (b: unknown) => ({ json: { resolution: { candidate_id: (b as { candidate: string }).candidate, disposition: 'related', promotion_eligibility: 'eligible', canonical_id: 'S-1', status: 'pending' }, review: {} } }),
    }, sent);
    render(<KnowledgeScreen view="review" />);
    const card = await screen.findByRole('region', { name: '<i>Queues</i> drain first' });
    expect(card.textContent).toContain('shared: queue, drain');
    // One candidate is counted in the singular.
    expect(screen.getByText('1 candidate')).toBeTruthy();
    // The whole text a promote writes, under its label, with the right-to-left override shown, not obeyed.
    expect(card.querySelector('[data-testid="candidate-content"]')!.textContent).toBe('Queues drain first.\nThen\\u{202e} the workers stop.');
    expect(card.textContent).toContain('From run session (manual) · coding');
    expect(card.textContent).toContain('Disposition: related');
    expect(card.textContent).toContain('Receipt: fresh');
    fireEvent.click(screen.getByRole('button', { name: 'Resolve' }));
    expect((await screen.findByRole('alert')).textContent).toBe('Say why: a reason is required.');
    expect(sent.filter((r) => r.method === 'POST')).toHaveLength(0);
    fireEvent.change(screen.getByLabelText('Resolve as'), { target: { value: 'related' } });
    expect((screen.getByLabelText('Target') as HTMLInputElement).value).toBe('S-1');
    fireEvent.change(screen.getByLabelText('Reason'), { target: { value: 'same topic' } });
    fireEvent.click(screen.getByRole('button', { name: 'Resolve' }));
    await waitFor(() => expect(sent.find((r) => r.method === 'POST')).toBeTruthy());
    expect(sent.find((r) => r.method === 'POST')).toEqual({ method: 'POST', url: '/api/knowledge/review/task-1/resolve?projectId=p1', body: { candidate: 'KDC-0123456789abcdef', as: 'related', reason: 'same topic', target: 'S-1' } });
    expect((await screen.findByTestId('review-note')).textContent).toBe('Resolved: KDC-0123456789abcdef → related');
  });

  it("says what a promotion in the project's own checkout committed there, and what it left uncommitted and why; nothing of the kind for a shared remote's, which is pushed", async () => {
    const promotion = { schema: 'knowledge-promotion-result/1.0', session_id: 'task-1', promoted: [{ candidate_id: 'KDC-0123456789abcdef', target: 'spec', promoted_id: 'S-20261207-0123456789abcdef', outcome: 'created', supersedes: null }], already_promoted: [], skipped_observed: [], skipped_review_required: [], skipped_suppressed: [], skipped_blocked: [], warnings: [] };
    const project = { id: 'p1', name: 'mathlib', repoPath: '/src/mathlib', config: {}, createdAt: 0, updatedAt: 0, archivedAt: null };
    const committed = { sha: '0123456789abcdef0123456789abcdef01234567', files: ['.workflow/specs/coding-conventions.md'], uncommitted: [], why: null };
    const left = { sha: null, files: [], uncommitted: ['.workflow/specs/coding-conventions.md'], why: 'they had uncommitted changes of yours before the promotion' };
    for (const [config, commit, said] of [
      [{}, committed, 'Promoted as S-20261207-0123456789abcdef. Committed in /src/mathlib (0123456).'],
      [{}, left, 'Promoted as S-20261207-0123456789abcdef. Not committed in /src/mathlib: .workflow/specs/coding-conventions.md (they had uncommitted changes of yours before the promotion).'],
      // A server that commits nothing says no `commit`: written only.
      [{}, undefined, 'Promoted as S-20261207-0123456789abcdef. Written to .workflow/ in /src/mathlib, not committed: commit it there (git status lists the files) for the team and later agents to share it.'],
      [{ remote: '/srv/git/mathlib.git' }, undefined, 'Promoted as S-20261207-0123456789abcdef.'],
    ] as const) {
      useProjects.setState({ projects: [{ ...project, config }], selectedId: 'p1' });
      serve({ '/api/knowledge/review': queue(candidate()), 'POST /api/knowledge/review/task-1/promote': { ...promotion, ...(commit ? { commit } : {}) }, 'POST /api/knowledge/review/task-1/reconcile': queue(candidate()).sessions[0]!.review });
      render(<KnowledgeScreen view="review" />);
      await screen.findByRole('region', { name: '<i>Queues</i> drain first' });
      fireEvent.click(screen.getByRole('button', { name: 'Promote' }));
      await waitFor(() => expect(screen.getByTestId('review-note').textContent).toBe(said));
      cleanup();
    }
    useProjects.setState({ projects: [], selectedId: 'p1' });
  });

  it("does not ask to decide a replaced version's candidates once each is decided (an exact duplicate is rejected on its own)", async () => {
    const exactDuplicate = { disposition: 'exact_duplicate', promotion_eligibility: 'suppressed' };
    const sessionOf = (candidates: object[], cause: 'rejected' | 'retried') => {
      const s = queue(candidates).sessions[0]!;
      const superseded = { task_id: 't0', version: 1, cause, gate: cause === 'rejected' ? 'exec_review' : null, reason: 'lint failed', who: 'ana', at: '2026-12-01T00:00:00.000Z', superseded_by: { task_id: 't1', version: 2, session_id: 'task-1' } };
      return { projectId: 'p1', sessions: [{ ...s, session_id: 'task-0', review: { ...s.review, session_id: 'task-0', superseded } }], unreadable: [] };
    };
    const said = async () => (await screen.findByTestId('review-superseded')).textContent;
    // Rejected on its own as an exact duplicate, or still pending in a run not sealed yet (the seal rejects it): nothing left.
    for (const [candidates, cause, text] of [
      [[candidate({ status: 'rejected', ...exactDuplicate }), candidate({ candidate_id: 'KDC-1', status: 'promoted' })], 'rejected', 'From v1 of the task, rejected at execution review by ana: lint failed. The task goes on as v2; nothing of it is left to decide: each candidate was decided (an exact duplicate of existing knowledge is rejected on its own).'],
      [[candidate(exactDuplicate)], 'retried', 'From v1 of the task, replaced when ana retried it from the current main (lint failed). The task goes on as v2; nothing of it is left to decide: each candidate was decided (an exact duplicate of existing knowledge is rejected on its own).'],
      [[candidate({ status: 'rejected', ...exactDuplicate }), candidate({ candidate_id: 'KDC-1' })], 'rejected', 'From v1 of the task, rejected at execution review by ana: lint failed. The task goes on as v2; what this try learned may still hold, so decide each candidate.'],
    ] as const) {
      serve({ '/api/knowledge/review': sessionOf([...candidates], cause) });
      render(<KnowledgeScreen view="review" />);
      expect(await said()).toBe(text);
      cleanup();
    }
  });

  it("says a rejected version's candidates come from it, in every language, after the current version's", async () => {
    const current = queue(candidate()).sessions[0]!;
    const rejected = { ...current, session_id: 'task-0', review: { ...current.review, session_id: 'task-0', superseded: { task_id: 't0', version: 1, cause: 'rejected', gate: 'exec_review', reason: 'wrong <b>queue</b>', who: 'ana', at: '2026-12-01T00:00:00.000Z', superseded_by: { task_id: 't1', version: 2, session_id: 'task-1' } } } };
    serve({ '/api/knowledge/review': { projectId: 'p1', sessions: [rejected, { ...current, review: { ...current.review, superseded: null } }], unreadable: [] } });
    render(<KnowledgeScreen view="review" />);
    const regions = await screen.findAllByRole('region', { name: /^Session task-/ });
    expect(regions.map((r) => r.getAttribute('aria-label'))).toEqual(['Session task-1', 'Session task-0']);
    expect(regions[0]!.querySelector('[data-testid="review-superseded"]')).toBeNull();
    const said = () => screen.getByTestId('review-superseded').textContent;
    expect(said()).toBe('From v1 of the task, rejected at execution review by ana: wrong <b>queue</b>. The task goes on as v2; what this try learned may still hold, so decide each candidate.');
    expect(regions[1]!.querySelector('h3')!.textContent).toContain('v1, superseded');
    const expected: Record<string, string[]> = { fr: ['v1', 'rejetée en revue de l’exécution', 'v2'], es: ['v1', 'rechazada en revisión de la ejecución', 'v2'], ja: ['v1', '実行レビュー', 'v2'], zh: ['v1', '执行评审', 'v2'] };
    try {
      for (const [lang, words] of Object.entries(expected)) {
        act(() => setLanguage(lang as 'fr'));
        for (const w of [...words, 'wrong <b>queue</b>', 'ana']) expect(said(), lang).toContain(w);
      }
    } finally {
      act(() => setLanguage('en'));
    }
  });

  it('offers reconcile for a missing receipt, refuses promote and resolve until then, and shows a reconcile refusal', async () => {
    serve({
      '/api/knowledge/review': queue(candidate({ receipt: 'missing', disposition: null, promotion_eligibility: null, matches: [] }), [{ run_id: 'session', receipt: 'missing', reasons: ['no complete receipt'] }]),
      'POST /api/knowledge/review/task-1/reconcile': () => ({ status: 409, json: { error: { code: 'STALE_RECEIPT', message: 'ledger unreadable' } } }),
    });
    render(<KnowledgeScreen view="review" />);
    await screen.findByText('No similar knowledge.');
    expect((screen.getByRole('button', { name: 'Promote' }) as HTMLButtonElement).disabled).toBe(true);
    expect((screen.getByRole('button', { name: 'Resolve' }) as HTMLButtonElement).disabled).toBe(true);
    expect(screen.getByTestId('review-stale').textContent).toContain('What is shown may be out of date: session: no complete receipt.');
    fireEvent.click(screen.getByRole('button', { name: 'Reconcile' }));
    expect((await screen.findByRole('alert')).textContent).toBe('ledger unreadable');
  });

  it('says why a receipt is stale and what Reconcile does; Promote takes a stale receipt (the promotion checks it again) and, refused, reads the queue again', async () => {
    const sent: Array<{ method: string; url: string; body: unknown }> = [];
    const reasons = ['project knowledge changed since the receipt', 'matcher revision 3 ≠ 4'];
    const refusal = 'Cannot promote: the reconciliation of KDC-0123456789abcdef changed when session task-1\'s receipt was refreshed (the project knowledge changed since the review); review again: maestro knowledge review task-1.';
    serve({
      '/api/knowledge/review': queue(candidate({ receipt: 'stale' }), [{ run_id: 'r-1', receipt: 'stale', reasons }]),
      'POST /api/knowledge/review/task-1/promote': () => ({ status: 409, json: { error: { code: 'STALE_RECEIPT', message: refusal } } }),
    }, sent);
    render(<KnowledgeScreen view="review" />);
    const stale = await screen.findByTestId('review-stale');
    expect(stale.textContent).toBe(
      'What is shown may be out of date: r-1: project knowledge changed since the receipt; matcher revision 3 ≠ 4.' +
        'Reconcile matches these candidates again against the project knowledge as it is now and shows where each stands; a decision you recorded stays while the entry it names exists. Resolving needs it first, and so does a candidate with no receipt; Promote checks a stale one again by itself and refuses it if its standing changed.' +
        'Reconcile',
    );
    expect((screen.getByRole('button', { name: 'Resolve' }) as HTMLButtonElement).disabled).toBe(true);
    const promote = screen.getByRole('button', { name: 'Promote' }) as HTMLButtonElement;
    expect(promote.disabled).toBe(false);
    fireEvent.click(promote);
    expect((await screen.findByRole('alert')).textContent).toBe(refusal);
    // The refusal refreshed the receipt: the queue is read again to show the standing it found. No reconcile was sent.
    await waitFor(() => expect(sent.filter((r) => r.method === 'GET' && r.url.startsWith('/api/knowledge/review?'))).toHaveLength(2));
    expect(sent.filter((r) => r.method === 'POST').map((r) => r.url)).toEqual(['/api/knowledge/review/task-1/promote?projectId=p1']);
  });

  it("after its own promotion in a fresh session, reconciles that session (the entry it wrote made every receipt stale) and shows the standing found; not in a session already stale", async () => {
    const promotion = { schema: 'knowledge-promotion-result/1.0', session_id: 'task-1', promoted: [{ candidate_id: 'KDC-0123456789abcdef', target: 'spec', promoted_id: 'S-20261207-0123456789abcdef', outcome: 'created', supersedes: null }], already_promoted: [], skipped_observed: [], skipped_review_required: [], skipped_suppressed: [], skipped_blocked: [], warnings: [] };
    const other = candidate({ candidate_id: 'KDC-fedcba9876543210', title: 'Workers stop last' });
    for (const [receipt, reconciled] of [['fresh', true], ['stale', false]] as const) {
      const sent: Array<{ method: string; url: string; body: unknown }> = [];
      let promoted = false;
      const sources = [{ run_id: 'r-1', receipt, reasons: receipt === 'stale' ? ['project knowledge changed since the receipt'] : [] }];
      serve({
        // Before: two candidates as `receipt` says; after the promotion, the other one alone, stale until reconciled.
        '/api/knowledge/review': () => ({ json: promoted ? queue({ ...other, receipt: sent.some((r) => r.url.includes('/reconcile')) ? 'fresh' : 'stale' }, []) : queue([candidate({ receipt }), { ...other, receipt }], sources) }),
        'POST /api/knowledge/review/task-1/promote': () => {
          promoted = true;
          return { json: promotion };
        },
        'POST /api/knowledge/review/task-1/reconcile': () => ({ json: queue(other).sessions[0]!.review }),
      }, sent);
      render(<KnowledgeScreen view="review" />);
      fireEvent.click((await screen.findByRole('region', { name: '<i>Queues</i> drain first' })).querySelector('button[type="button"]')!);
      await screen.findByText(/^Promoted as S-20261207-0123456789abcdef/);
      await waitFor(() => expect(screen.queryByRole('region', { name: '<i>Queues</i> drain first' })).toBeNull());
      expect(sent.filter((r) => r.method === 'POST').map((r) => r.url.split('?')[0]), receipt).toEqual(['/api/knowledge/review/task-1/promote', ...(reconciled ? ['/api/knowledge/review/task-1/reconcile'] : [])]);
      expect(screen.getByRole('region', { name: 'Workers stop last' }).textContent, receipt).toContain(`Receipt: ${reconciled ? 'fresh' : 'stale'}`);
      expect(screen.queryByRole('alert')).toBeNull();
      cleanup();
    }
  });

  it("shows one session's candidates when the task detail's link names it, with a way back to the whole queue", async () => {
    const one = queue(candidate()).sessions[0]!;
    serve({ '/api/knowledge/review': { projectId: 'p1', sessions: [{ ...one, session_id: 'task-2', review: { ...one.review, session_id: 'task-2' } }, one], unreadable: [] } });
    render(<KnowledgeScreen view="review" id="task-1" />);
    const regions = await screen.findAllByRole('region', { name: /^Session task-/ });
    expect(regions.map((r) => r.getAttribute('aria-label'))).toEqual(['Session task-1']);
    expect(screen.getByTestId('review-filter').textContent).toBe('Only session task-1.Show the whole queue');
    expect(screen.getByRole('link', { name: 'Show the whole queue' }).getAttribute('href')).toBe('#/knowledge/review');
  });

  it('renders the audit report with its findings, and the prune plan on request', async () => {
    const asked = serve({
      '/api/knowledge/audit': {
        schema: 'knowledge-audit/1.0', scope: 'all', generated_at: '2026-12-01T00:00:00.000Z',
        spec_health: { total: 4, active: 3, deprecated: 1, findings: 1 }, knowhow: { total: 2, active: 2, deprecated: 0, invalid: 0 },
        usage: { consumed_total: 0, distinct: 0, top10_share: 0, gini: 0 }, pipeline: { sessions: 1, ledgers: 1, pending_observed: 1, pending_corroborated: 0, promoted: 2 },
        findings: [{ id: 'KAU-1', store: 'spec', priority: 'P1', subtype: 'exact-duplicate', target: 'S-2', evidence: 'same title and content as S-1', recommended_action: 'deprecate' }],
        prune_plan: [], applied: { count: 0, backup_dir: null }, safety: {},
      },
    });
    render(<KnowledgeScreen view="audit" />);
    expect((await screen.findByText(/^Specs: 3 active of 4/)).textContent).toBe('Specs: 3 active of 4 · know-how: 2 active of 2 · sessions: 1 · pending: 1 · promoted: 2');
    const row = screen.getByRole('table', { name: 'Audit' }).querySelector('tbody tr')!;
    expect(row.textContent).toBe('P1specS-2exact-duplicate: same title and content as S-1deprecate');
    fireEvent.click(screen.getByLabelText('Show the prune plan'));
    await screen.findByText('Nothing to prune.');
    expect(asked.at(-1)).toBe('/api/knowledge/audit?projectId=p1&prune=true');
  });
});

describe('MetricsScreen', () => {
  it('charts the newest finished tasks by hour, each hour its own bar, oldest first', async () => {
    const at = (day: number, hour: number, minute: number) => new Date(2026, 10, day, hour, minute).getTime();
    const status = (id: number, to: string, time: number) => ({ id, projectId: 'p1', taskId: `t${id}`, runId: null, traceId: null, type: 'task.status', payload: { from: 'merging', to }, at: time });
    const asked = serve({
      '/api/metrics': { tasksByStatus: { done: 4 }, runDurations: [], usage: [] },
      // Newest first, as asked: two done at 10:xx on the 2nd, one at 10:xx on the 1st (another day's 10:00), one at 09:xx on the 2nd.
      '/api/events': {
        events: [status(9, 'done', at(2, 10, 40)), status(8, 'merging', at(2, 10, 30)), status(7, 'done', at(2, 10, 5)), status(6, 'done', at(2, 9, 59)), status(5, 'done', at(1, 10, 0))],
        nextAfter: null,
        nextBefore: 5,
      },
    });
    render(<MetricsScreen />);
    const chart = await screen.findByRole('img', { name: 'Throughput (tasks done per hour)' });
    const eventsAsked = asked.find((u) => u.startsWith('/api/events?'))!;
    expect(eventsAsked).toContain('order=newest');
    expect(eventsAsked).toContain('type=task.status');
    const bars = [...chart.querySelectorAll('g')].map((g) => [...g.querySelectorAll('text')].map((t) => t.textContent));
    expect(bars).toEqual([['11-01 10:00', '1'], ['11-02 09:00', '1'], ['11-02 10:00', '2']]);
  });

  it('writes each project\'s cost, runs and tokens as figures that never break inside', async () => {
    serve({
      '/api/metrics': { tasksByStatus: { done: 1 }, runDurations: [], usage: [{ projectId: 'p1', runs: 42, inputTokens: 1234567, outputTokens: 8910, costUsd: 12.34 }] },
      '/api/events': { events: [], nextAfter: null, nextBefore: null },
    });
    using _ = withScreenStyles();
    render(<MetricsScreen />);
    const cost = await screen.findByTestId('project-cost');
    expect(cost.textContent).toBe('$12.3400');
    // The card breaks long names anywhere (overflow-wrap: anywhere); the cost opts out whole.
    expect(getComputedStyle(cost).whiteSpace).toBe('nowrap');
    // Runs and tokens wrap between words only: "1,234,567 in / 8,910 out" never splits a number.
    expect(getComputedStyle(screen.getByText('42 runs')).overflowWrap).toBe('normal');
    expect(getComputedStyle(screen.getByText('1,234,567 in / 8,910 out')).overflowWrap).toBe('normal');
  });
});

/**
 * Screens.module.css in the page, under the class names the test build gives the module (vitest leaves CSS out of
 * the document): what the element's computed style is, not which class it carries.
 */
function withScreenStyles(): Disposable {
  const css = readFileSync(join(import.meta.dirname, 'Screens.module.css'), 'utf8').replace(/\.([a-zA-Z]\w*)/g, (whole, name: string) => (styles[name] ? `.${styles[name]}` : whole));
  const style = document.createElement('style');
  style.textContent = css;
  document.head.append(style);
  return { [Symbol.dispose]: () => style.remove() };
}

describe('ObserverScreen', () => {
  it('lists sessions and shows a session as cards with knowledge, summary, the wiki badge and the flow graph', async () => {
    serve({
      '/api/observer/sessions': { sessions: [{ sessionId: 's1', isLast: true, load: { status: 'hit' }, explorationCount: 1, bundleUpdatedAt: 1, intent: { intentKey: 'k', nodeTitle: 'Fix the login', phase: 'build' } }] },
      '/api/observer/sessions/s1': {
        sessionId: 's1', load: { status: 'hit' }, intent: null, tokens: { input: 10, output: 20 },
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

  it('shows a subagent nested in its exploration, "1 tool" in the singular, and a proposal the person accepts', async () => {
    const proposal = { schemaVersion: 1, id: 'P-2026-11-20T10-00-00-000Z-C001', status: 'open', kind: 'update', reason: 'no_agent', targetId: 'C001', targetPath: 'contexts/debug/C001-login.md', targetRequest: 'Fix login', filedAt: '2026-11-20T10:00:00.000Z', source: { sessionId: 's1', explorationId: 'exp_1' }, newFacts: ['expiresIn is now 3600 seconds'], draft: { solution: '- expiresIn is now 3600 seconds' } };
    const state = { open: [proposal] };
    const sent: Array<{ method: string; url: string; body: unknown }> = [];
    serve({
      '/api/observer/sessions': { sessions: [{ sessionId: 's1', isLast: true, load: { status: 'hit' }, explorationCount: 1, bundleUpdatedAt: 1, intent: null }] },
      '/api/observer/sessions/s1': {
        sessionId: 's1', load: { status: 'hit' }, intent: null, tokens: { total: 1200, input: 0, output: 0 },
        explorations: [{ id: 'exp_1', question: 'Why does login fail?', status: 'complete', toolCount: 1, errorCount: 0, toolSummary: 'Task×1', files: [], durationMs: null, tokens: 1200, tokenBreakdown: null,
          subagents: [{ prompt: 'Search the auth code', toolCount: 2, errorCount: 0, toolSummary: 'Grep×2' }],
          knowledge: null, summary: null, wiki: { origin: 'saved', status: 'skipped', reason: 'proposed_no_agent', targetId: 'C001', proposalId: proposal.id, completedAt: 1 } }],
        flow: null,
      },
      '/api/observer/proposals': () => ({ json: { open: state.open, closed: [], problems: [] } }),
      [`POST /api/observer/proposals/${proposal.id}/accept`]: () => {
        state.open = [];
        return { json: { proposal: { ...proposal, status: 'accepted' }, entry: { id: 'C001', relativePath: proposal.targetPath } } };
      },
    }, sent);
    render(<ObserverScreen id="s1" />);
    expect(await screen.findByText('Why does login fail?')).toBeTruthy();
    expect(screen.getByText(/^1 tool ·/)).toBeTruthy();
    expect(screen.getByText(/Subagent: Search the auth code · 2 tools Grep×2/)).toBeTruthy();
    expect(screen.getByText('wiki: proposal for C001')).toBeTruthy();
    // A GUI-Anything bundle has only the token total: it is shown, not 0 in / 0 out.
    expect(screen.getByText('Tokens: 1200')).toBeTruthy();
    const card = await screen.findByRole('article', { name: 'Proposal for C001 (no_agent)' });
    expect(card.textContent).toContain('expiresIn is now 3600 seconds');
    fireEvent.click(screen.getByRole('button', { name: 'Accept' }));
    expect(await screen.findByText('Accepted: C001 updated.')).toBeTruthy();
    expect(sent.filter((r) => r.method === 'POST').map((r) => r.url)).toEqual([`/api/observer/proposals/${proposal.id}/accept`]);
    expect(await screen.findByText('No curation proposals waiting.')).toBeTruthy();
  });

  it('cuts a long flow-graph label before a redaction marker, never inside it', async () => {
    // A trial: a title cut inside the marker read `… [redacted: [devops]`.
    const node = (id: string, label: string) => ({ id, explorationId: id, label, status: 'complete', metaBadges: { tools: 1, errors: 0, wiki: 'none' } });
    serve({
      '/api/observer/sessions': { sessions: [] },
      '/api/observer/sessions/s1': {
        sessionId: 's1', load: { status: 'hit' }, intent: null, tokens: { input: 0, output: 0 }, explorations: [],
        flow: { nodes: [node('exp_1', 'Deploy the app, key [redacted: anthropic-key]'), node('exp_2', 'Deploy the app again with docker')], edges: [] },
      },
    });
    render(<ObserverScreen id="s1" />);
    const graph = await screen.findByRole('img', { name: 'Flow graph' });
    expect([...graph.querySelectorAll('text')].map((t) => t.textContent)).toEqual(['Deploy the app, key …', 'Deploy the app again wi…']);
  });

  it('with no session yet, says how to get one (it said only that there was none)', async () => {
    serve({ '/api/observer/sessions': { sessions: [] }, '/api/observer/proposals': { open: [], closed: [], problems: [] } });
    render(<ObserverScreen />);
    expect(await screen.findByText('No observed sessions yet.')).toBeTruthy();
    expect(screen.getByText(/^Run `maestro observe` in a project folder beside a Claude Code session/)).toBeTruthy();
  });

  it('says the observer is not available on a daemon without its routes', async () => {
    serve({});
    render(<ObserverScreen />);
    expect(await screen.findByText('The observer is not available on this daemon.')).toBeTruthy();
  });

  it('updates live: an observer update on the feed reloads the list and the open session', async () => {
    const summary = (n: number) => ({ sessionId: 's1', isLast: true, load: { status: 'hit' }, explorationCount: n, bundleUpdatedAt: n, intent: null });
    const view = (qs: string[]) => ({ sessionId: 's1', load: { status: 'hit' }, explorations: qs.map((q, i) => ({ id: `exp_${i}`, question: q, status: 'complete', toolCount: 0, errorCount: 0, toolSummary: '', files: [], durationMs: null, knowledge: null, summary: null, wiki: null })), flow: null });
    const state = { list: [summary(1)], qs: ['First question'] };
    vi.stubGlobal('fetch', async (url: string) => new Response(JSON.stringify(url.startsWith('/api/observer/sessions/s1') ? view(state.qs) : url.startsWith('/api/observer/proposals') ? { open: [], closed: [], problems: [] } : { sessions: state.list })));
    render(<ObserverScreen id="s1" />);
    await screen.findByText('First question');
    expect(screen.getByText('1 exploration')).toBeTruthy();
    state.list = [summary(2)];
    state.qs = ['First question', 'Second question'];
    // Another session's update reloads the list only; this session's update reloads the view too.
    const event = (sessionId: string) => ({ id: 0, projectId: null, taskId: null, runId: null, traceId: null, type: 'observer.update', at: 1, payload: { type: 'session.updated', sessionId, revision: 2, explorationCount: 2, runningExplorationId: null, at: 1 } });
    expect(useObserverFeed.getState().apply(event('other') as never)).toBe(true);
    expect(await screen.findByText('2 explorations')).toBeTruthy();
    expect(screen.queryByText('Second question')).toBeNull();
    useObserverFeed.getState().apply(event('s1') as never);
    expect(await screen.findByText('Second question')).toBeTruthy();
    expect(screen.getByTestId('observer-updated').textContent).toMatch(/^Updated at /);
    // A task event is not the observer's.
    expect(useObserverFeed.getState().apply({ ...event('s1'), type: 'task.status' } as never)).toBe(false);
  });
});
