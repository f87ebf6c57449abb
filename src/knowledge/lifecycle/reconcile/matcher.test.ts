/** The matcher's published rules (FORMATS §4.4): stance in English and Chinese, relations, dispositions, eligibility. */
import { describe, expect, it } from 'vitest';
import type { CorpusDoc } from '../ledger/recipes.js';
import { associatedDocs, feat, matchCandidate, prepareCorpus, similarity, stanceOf, type MatchCandidate } from './matcher.js';

const doc = (id: string, title: string, content: string, extra: Partial<CorpusDoc> = {}): CorpusDoc => ({
  id, target: 'spec', title, content, status: 'active', confidence: null, related: [], supersedes: [], superseded_by: null, source_path: `specs/${id}.md`, source_line: 1, category: 'coding', aliases: [id], ...extra,
});
const cand = (content: string, extra: Partial<MatchCandidate> = {}): MatchCandidate => ({ candidate_id: 'KDC-0000000000000000', target: 'spec', action: 'propose', title: content.slice(0, 40), content, evidence_refs: ['run:r'], ...extra });

const CORPUS = prepareCorpus([
  doc('S-1', 'Retry budget', 'Network calls must retry at most three times with exponential backoff.'),
  doc('S-2', '日志规范', '日志必须使用结构化 JSON 格式输出。'),
  doc('S-3', 'Unrelated', 'Colors in the dashboard follow the brand palette.'),
  doc('K-1', 'Retry budget', 'Network calls must retry at most three times with exponential backoff.', { target: 'knowhow', source_path: 'knowhow/K-1.md' }),
]);
const none = new Set<number>();

describe('matcher', () => {
  it('stance: English and Chinese, negation wins over its own modal', () => {
    expect(stanceOf('calls must not retry')).toBe('negative');
    expect(stanceOf('calls must retry')).toBe('positive');
    expect(stanceOf('日志不得包含密钥')).toBe('negative');
    expect(stanceOf('日志必须使用 json')).toBe('positive');
    expect(stanceOf('logs are json')).toBe('unknown');
    expect(stanceOf('calls must never retry')).toBe('unknown'); // both a negative and (after removing it) a positive modal
  });

  it('exact duplicate → suppressed automatically; a different target is only related', () => {
    const r = matchCandidate(cand('network calls must retry at most three times with exponential backoff.'), CORPUS, none);
    expect(r).toMatchObject({ disposition: 'exact_duplicate', promotion_eligibility: 'suppressed', canonical_id: 'S-1', resolution: { status: 'automatic' } });
    expect(r.matches.find((m) => m.knowledge_id === 'K-1')!.relation).toBe('related');
  });

  it('opposite stance on similar text → potential conflict, review required (English and Chinese)', () => {
    const en = matchCandidate(cand('Network calls must not retry more than three times with exponential backoff.', { title: 'Retry budget' }), CORPUS, none);
    expect(en.disposition).toBe('potential_conflict');
    expect(en.promotion_eligibility).toBe('review_required');
    const zh = matchCandidate(cand('日志不得使用结构化 JSON 格式输出。', { title: '日志规范' }), CORPUS, none);
    expect(zh.disposition).toBe('potential_conflict');
  });

  it('actions steer: contest → conflict, supersede → supersede candidate; unrelated → unique and eligible', () => {
    expect(matchCandidate(cand('Retry network calls at most three times, with backoff.', { title: 'Retry budget', action: 'supersede' }), CORPUS, none).disposition).toBe('supersede_candidate');
    expect(matchCandidate(cand('Retry network calls at most three times, with backoff.', { title: 'Retry budget', action: 'contest' }), CORPUS, none).disposition).toBe('potential_conflict');
    const u = matchCandidate(cand('Database migrations are forward-only.'), CORPUS, none);
    expect(u).toMatchObject({ disposition: 'unique', promotion_eligibility: 'eligible', canonical_id: null, matches: [] });
  });

  it('relation: a doc linked to a recorded input is matched even when lexically far; transcript-only evidence needs review', () => {
    const assoc = associatedDocs(CORPUS, [{ knowledge_id: 'S-3', signal: 'validated', source: 'manual', count: 1, first_recorded_at: '', last_recorded_at: '' }]);
    const r = matchCandidate(cand('Database migrations are forward-only.'), CORPUS, assoc);
    expect(r.matches.map((m) => [m.knowledge_id, m.relation, m.scores.relation])).toEqual([['S-3', 'related', 1]]);
    expect(r.promotion_eligibility).toBe('eligible');
    const t = matchCandidate(cand('Database migrations are forward-only.', { evidence_refs: ['run:r', 'transcript:claude:abc:e1:0123456789abcdef'] }), CORPUS, none);
    expect(t.promotion_eligibility).toBe('review_required');
  });

  it('scores from posting-list counts equal the set-based definition (Jaccard of tokens, Dice of trigrams)', () => {
    const texts = ['Network calls must retry at most three times.', '网络请求最多重试三次，并使用指数退避。', 'Retry network calls three times at most, with backoff', 'abc', 'a b', 'Caches are invalidated on write; retries are bounded.'];
    const pc = prepareCorpus(texts.map((t, i) => doc(`D-${i}`, t.slice(0, 12), t)));
    for (const q of texts) {
      const r = matchCandidate(cand(q, { title: q.slice(0, 12) }), pc, new Set(pc.docs.map((_, i) => i)));
      for (const m of r.matches) {
        const d = pc.docs.find((x) => x.id === m.knowledge_id)!;
        expect(m.scores.lexical).toBeCloseTo(similarity(feat(q), feat(d.content)), 4);
        expect(m.scores.title).toBeCloseTo(similarity(feat(q.slice(0, 12)), feat(d.title)), 4);
      }
      expect(r.matches).toHaveLength(texts.length); // all related through the input association
    }
  });
});
