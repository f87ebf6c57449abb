import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { tempRoot, writeFiller, writeKnowhowFile } from '../../../test/helpers/knowledge.js';
import type { CodeHit } from '../graph/graph.js';
import { INDEX_FILE } from '../index/store.js';
import { openKnowledge } from '../knowledge.js';
import { isIdentifierQuery, knowledgeBoost, mergeMixed, sourceWeights } from './mixed.js';
import type { SearchResult } from './search.js';
import { appendSpecEntry } from '../format/specWriter.js';

describe('FORMATS §5.2 mixed merge: the published values', () => {
  it('boosts knowledge types and penalises low and contested confidence', () => {
    expect(knowledgeBoost('spec', 'spec', null)).toBe(1.15);
    expect(knowledgeBoost('knowhow', 'tip', null)).toBe(1.05);
    expect(knowledgeBoost('wiki', 'domain', null)).toBe(1.1);
    expect(knowledgeBoost('wiki', 'project', null)).toBe(0.95);
    expect(knowledgeBoost('wiki', 'roadmap', null)).toBe(0.95);
    expect(knowledgeBoost('wiki', 'issue', null)).toBe(0.85);
    expect(knowledgeBoost('wiki', 'note', null)).toBe(0.8);
    expect(knowledgeBoost('wiki', 'context', null)).toBe(1);
    expect(knowledgeBoost('spec', 'spec', 'contested')).toBeCloseTo(1.15 * 0.5, 10);
    expect(knowledgeBoost('knowhow', 'tip', 'low')).toBeCloseTo(1.05 * 0.7, 10);
    expect(knowledgeBoost('spec', 'spec', 'high')).toBe(1.15);
  });

  it('weights sources 0.6/0.4, 0.4/0.6 for an identifier query, 0.5/0.5 for a strong code match', () => {
    const code = [{ name: 'retryBudget' }, { name: 'retry' }];
    expect(sourceWeights('how retries are budgeted', [])).toEqual({ wiki: 0.6, code: 0.4, reason: 'default' });
    expect(sourceWeights('how retries are budgeted', code)).toEqual({ wiki: 0.6, code: 0.4, reason: 'default' });
    expect(sourceWeights('retryBudget', code)).toEqual({ wiki: 0.4, code: 0.6, reason: 'identifier' });
    expect(sourceWeights('Retry', code)).toEqual({ wiki: 0.5, code: 0.5, reason: 'strongCode' });
    for (const q of ['openKnowledge', 'src/knowledge/search.ts', 'search_index', 'utf8', 'KnowledgeEntry', '@scope/pkg']) expect(isIdentifierQuery(q)).toBe(true);
    for (const q of ['retry policy', 'how to deploy', 'Retry', '缓存 失效']) expect(isIdentifierQuery(q)).toBe(false);
  });

  it('interleaves rank-normalised sources by weight, knowledge first on ties, and renumbers ranks', () => {
    const w = (id: string) => ({ source: 'wiki', id, kind: 'knowhow', score: 1 }) as unknown as SearchResult;
    const c = (id: string): CodeHit => ({ id, kind: 'function', name: id, filePath: 'src/a.ts', line: 3, score: 1, signature: `function ${id}()` });
    const wiki = [w('w1'), w('w2'), w('w3')];
    const code = [c('c1'), c('c2')];
    // keys: w1 .6, c1 .4, w2 .3, w3 .2, c2 .2
    expect(mergeMixed(wiki, code, { wiki: 0.6, code: 0.4 }, 10).map((r) => [r.id, r.rank])).toEqual([
      ['w1', 1],
      ['c1', 2],
      ['w2', 3],
      ['w3', 4],
      ['c2', 5],
    ]);
    // keys: c1 .6, w1 .4, c2 .3, w2 .2 …
    expect(mergeMixed(wiki, code, { wiki: 0.4, code: 0.6 }, 3).map((r) => r.id)).toEqual(['c1', 'w1', 'c2']);
    const codeResult = mergeMixed([], code, { wiki: 0.6, code: 0.4 }, 1)[0]!;
    expect(codeResult).toEqual({ source: 'code', id: 'c1', graphId: 'c1', kind: 'function', name: 'c1', detail: 'src/a.ts:3', rank: 1, score: 1, signature: 'function c1()', filePath: 'src/a.ts', line: 3, selectionReason: 'relevance' });
  });
});

describe('mixed search end to end', () => {
  it('ranks by type boost and confidence penalty before selection', () => {
    const { dir, root } = tempRoot();
    writeFiller(root, 10);
    appendSpecEntry(root, { category: 'debug', title: 'Retry budget rules', content: 'retry budget per minute', keywords: ['retry'], confidence: 'contested' });
    writeKnowhowFile(root, 'TIP-20260801-retry', { title: 'Retry budget notes', tags: ['retry'] }, 'retry budget per hour');
    const k = openKnowledge({ env: process.env, workflowRoot: dir });
    try {
      const res = k.search('retry budget', { limit: 2, decay: false, diversity: 'off' });
      // contested (×0.5) puts the spec under the knowhow entry …
      expect(res.results.map((r) => r.kind)).toEqual(['knowhow', 'spec']);
    } finally {
      k.close();
    }
    const other = tempRoot();
    writeFiller(other.root, 10);
    appendSpecEntry(other.root, { category: 'debug', title: 'Retry budget rules', content: 'retry budget per minute', keywords: ['retry'] });
    writeKnowhowFile(other.root, 'TIP-20260801-retry', { title: 'Retry budget notes', tags: ['retry'] }, 'retry budget per hour');
    const k2 = openKnowledge({ env: process.env, workflowRoot: other.dir });
    try {
      // … and without the penalty spec (1.15) outranks knowhow (1.05).
      expect(k2.search('retry budget', { limit: 2, decay: false, diversity: 'off' }).results.map((r) => r.kind)).toEqual(['spec', 'knowhow']);
    } finally {
      k2.close();
    }
  });

  it('mixes code symbols into the default search once the code graph exists, weighted by the query', async () => {
    const { dir, root } = tempRoot();
    writeFiller(root, 10);
    writeKnowhowFile(root, 'TIP-20260801-retry', { title: 'Retry budget notes', tags: ['retry', 'budget'] }, 'Keep the retry budget per minute small.');
    mkdirSync(join(dir, 'src'));
    writeFileSync(join(dir, 'src', 'retry.ts'), 'export function retryBudget(perMinute: number): number {\n  return perMinute;\n}\nexport class RetryQueue {}\n');
    const k = openKnowledge({ env: process.env, workflowRoot: dir });
    try {
      const before = await k.searchHybrid('retry budget', { limit: 5 });
      expect(before.codeIndex).toBe('not-initialized');
      expect(before.codeIndexHint).toMatch(/maestro search --code/);
      expect(before.results.every((r) => r.source === 'wiki')).toBe(true);
      await k.syncCode();

      const prose = await k.searchHybrid('retry budget', { limit: 5 });
      expect(prose.codeIndex).toBe('ok');
      expect(prose.sourceWeights.reason).toBe('default');
      expect(prose.results[0]).toMatchObject({ source: 'wiki', id: 'knowhow-tip-20260801-retry', rank: 1 });
      expect(prose.results[1]).toMatchObject({ source: 'code', id: 'code:src/retry.ts#retryBudget', kind: 'function', detail: 'src/retry.ts:1', rank: 2 });
      expect(prose.codeCount).toBeGreaterThan(0);
      expect(prose.wikiCount + prose.codeCount).toBe(prose.count);

      const ident = await k.searchHybrid('retryBudget', { limit: 1 });
      expect(ident.sourceWeights).toEqual({ wiki: 0.4, code: 0.6, reason: 'identifier' });
      expect(ident.results.map((r) => [r.source, r.id])).toEqual([['code', 'code:src/retry.ts#retryBudget']]);

      // A facet filter keeps the search to knowledge.
      const faceted = await k.searchHybrid('retry budget', { type: 'knowhow' });
      expect(faceted.codeIndex).toBe('skipped');
      expect(faceted.results.every((r) => r.source === 'wiki' && r.kind === 'knowhow')).toBe(true);
    } finally {
      k.close();
    }
    // Exposure counts only what the page returned: the identifier search (one slot, taken by code) bumped no knowledge entry.
    const db = new Database(join(dir, '.workflow', INDEX_FILE), { readonly: true });
    try {
      const hits = db.prepare("SELECT hits FROM exposure WHERE id = 'knowhow-tip-20260801-retry'").pluck().get();
      expect(hits).toBe(3); // before, prose, faceted
    } finally {
      db.close();
    }
  });
});
