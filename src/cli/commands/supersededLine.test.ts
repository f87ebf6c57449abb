import { describe, expect, it } from 'vitest';
import type { ReviewResult } from '../../api/wire/knowledgeReview.js';
import { supersededLine } from './knowledgeRuns.js';

type Candidate = ReviewResult['candidates'][number];
const v: NonNullable<ReviewResult['superseded']> = {
  task_id: 't0', version: 1, cause: 'rejected', gate: 'exec_review', reason: 'greet in French', who: 'ana', at: '2026-12-01T00:00:00.000Z',
  superseded_by: { task_id: 't1', version: 2, session_id: 'task-1' },
};
function candidate(id: string, over: Partial<Candidate>): Candidate {
  return {
    candidate_id: id, source_run: 'run-1', target: 'knowhow', action: 'add', title: id, content: id, category: null, status: 'pending', source_kind: 'report',
    occurrences: 1, first_recorded_at: null, corroboration: 1, receipt: 'fresh', disposition: 'unique', promotion_eligibility: 'eligible', canonical_id: null,
    canonical_status: null, matches: [], resolution: null, promote_command: null, ...over,
  };
}
const head = 'from v1 of the task, rejected at execution review by ana: greet in French; the task goes on as v2 (session task-1). ';
const exactDuplicate = { disposition: 'exact_duplicate', promotion_eligibility: 'suppressed' } as const;

describe("supersededLine: where a replaced version's candidates come from, and whether any is left to decide", () => {
  it('asks to decide each candidate while one is open', () => {
    expect(supersededLine(v, [candidate('a', { status: 'rejected', ...exactDuplicate }), candidate('b', {})])).toBe(`${head}What this try learned may still hold: decide each candidate.`);
    expect(supersededLine(v, [candidate('a', { status: 'draft', disposition: null, promotion_eligibility: null })])).toContain('decide each candidate');
  });

  it('says nothing is left when every candidate was rejected as an exact duplicate, or decided by a person', () => {
    const done = `${head}Nothing of it is left to decide: each candidate was decided (an exact duplicate of existing knowledge is rejected on its own).`;
    expect(supersededLine(v, [candidate('a', { status: 'rejected', ...exactDuplicate }), candidate('b', { status: 'promoted' })])).toBe(done);
    // An exact duplicate in a run not sealed yet is still `pending` in its ledger; the seal rejects it on its own.
    expect(supersededLine(v, [candidate('a', exactDuplicate)])).toBe(done);
  });
});
