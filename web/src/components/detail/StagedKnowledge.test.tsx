import { act, cleanup, render, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { setLanguage } from '../../i18n/index.js';
import { makeTask } from '../../testData.js';
import { StagedKnowledge } from './StagedKnowledge.js';

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const candidate = (id: string, title: string, status: string, run = 'r-1') => ({
  candidate_id: id, source_run: run, target: 'spec', action: 'propose', title, content: title, category: null, status, source_kind: 'constraint',
  occurrences: 1, first_recorded_at: null, corroboration: 1, receipt: 'fresh', disposition: 'unique', promotion_eligibility: 'eligible', canonical_id: null, canonical_status: null,
  matches: [], resolution: null, promote_command: null,
});
const review = (candidates: object[]) => ({ schema: 'knowledge-review/1.0', session_id: 'task-t-k', superseded: null, sources: [], candidates, triage: [], input_totals_by_source: {}, inputs: [] });

/** Answers the session's review route as given; records what was asked. */
function serve(answer: { status?: number; json: unknown }): string[] {
  const asked: string[] = [];
  vi.stubGlobal('fetch', async (url: string) => {
    asked.push(url);
    return new Response(JSON.stringify(answer.json), { status: answer.status ?? 200 });
  });
  return asked;
}

describe('StagedKnowledge', () => {
  it("names, at exec_review, the candidates the task's runs staged (one line each however many runs staged it), with a link to review them (the session id is the server's: task-<id as a path segment>)", async () => {
    const asked = serve({ json: review([candidate('KDC-1', 'Greetings are <b>short</b>', 'pending'), candidate('KDC-1', 'Greetings are <b>short</b>', 'pending', 'r-2'), candidate('KDC-2', 'Logs use UTC', 'rejected')]) });
    render(<StagedKnowledge task={makeTask({ id: 't_k', projectId: 'p 1', status: 'exec_review' })} />);
    const section = await screen.findByTestId('staged-knowledge');
    expect(asked).toEqual(['/api/knowledge/review/task-t-k?projectId=p+1']);
    expect(section.querySelector('p')!.textContent).toBe("This task's runs staged 2 knowledge candidates (1 not decided yet). They are reviewed apart from the change: approving the change promotes none of them.");
    expect([...section.querySelectorAll('li')].map((li) => li.textContent)).toEqual(['Greetings are <b>short</b> (pending)', 'Logs use UTC (rejected)']);
    expect(screen.getByRole('link', { name: 'Review them in the knowledge queue' }).getAttribute('href')).toBe('#/knowledge/review/task-t-k');
    try {
      for (const [lang, words] of [['zh', '2 个知识候选'], ['es', '2 candidatos de conocimiento'], ['ja', '2 件'], ['fr', '2 candidats de connaissance']] as const) {
        act(() => setLanguage(lang));
        expect(section.querySelector('p')!.textContent, lang).toContain(words);
      }
    } finally {
      act(() => setLanguage('en'));
    }
  });

  it('counts an exact duplicate of an entry as decided (its seal rejects it on its own) and says so beside it, as the review queue and task show do', async () => {
    const duplicate = { ...candidate('KDC-1', 'Errors carry codes', 'pending'), disposition: 'exact_duplicate', promotion_eligibility: 'suppressed' };
    serve({ json: review([duplicate, candidate('KDC-2', 'Logs use UTC', 'pending')]) });
    render(<StagedKnowledge task={makeTask({ status: 'exec_review' })} />);
    const section = await screen.findByTestId('staged-knowledge');
    expect(section.querySelector('p')!.textContent).toBe("This task's runs staged 2 knowledge candidates (1 not decided yet). They are reviewed apart from the change: approving the change promotes none of them.");
    expect([...section.querySelectorAll('li')].map((li) => li.textContent)).toEqual(['Errors carry codes (an exact duplicate of an entry: rejected on its own)', 'Logs use UTC (pending)']);
  });

  it('says one candidate in the singular', async () => {
    serve({ json: review([candidate('KDC-1', 'Greetings are short', 'pending')]) });
    render(<StagedKnowledge task={makeTask({ status: 'exec_review' })} />);
    expect((await screen.findByTestId('staged-knowledge')).querySelector('p')!.textContent).toBe("This task's runs staged 1 knowledge candidate (1 not decided yet). It is reviewed apart from the change: approving the change promotes nothing.");
  });

  it('says nothing for a task whose runs staged nothing, or made no session, or away from the gate; says why when the review cannot be read', async () => {
    for (const answer of [{ json: review([]) }, { status: 404, json: { error: { code: 'UNKNOWN_SESSION', message: 'No session task-t_x.' } } }, { status: 400, json: { error: { code: 'BAD_INPUT', message: 'The knowledge root does not exist.' } } }]) {
      const asked = serve(answer);
      const { container } = render(<StagedKnowledge task={makeTask({ status: 'exec_review' })} />);
      await waitFor(() => expect(asked).toHaveLength(1));
      await act(async () => {});
      expect(container.textContent).toBe('');
      cleanup();
    }
    const asked = serve({ json: review([candidate('KDC-1', 'Greetings are short', 'pending')]) });
    const { container } = render(<StagedKnowledge task={makeTask({ status: 'executing' })} />);
    await act(async () => {});
    expect([asked, container.textContent]).toEqual([[], '']);
    cleanup();

    serve({ status: 500, json: { error: { code: 'CORRUPT_FILE', message: 'knowledge-delta.json is not valid JSON.' } } });
    render(<StagedKnowledge task={makeTask({ status: 'exec_review' })} />);
    expect((await screen.findByTestId('staged-knowledge')).textContent).toBe("The knowledge this task's runs staged could not be read: knowledge-delta.json is not valid JSON.");
  });
});
