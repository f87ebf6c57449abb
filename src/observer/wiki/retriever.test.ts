import { rmSync, writeFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir, writeEntry, type TempDir } from '../__fixtures__/transcript-builder.js';
import { contentJaccard, contentTokens, matchTokens, normalizeMatchText, requestSimilarity } from '../text.js';
import { listWikiDocuments, listWikiEntries, type WikiEntry } from '../../knowledge/format/wiki/entries.js';
import { isGenericProjectQuery } from './generic-query.js';
import { InMemoryWikiRetriever, relevanceScore } from './retriever.js';
import { classifyScope, ensureScopeTags, isProjectCompatible } from './scope.js';

describe('similarity (FORMATS §8.6)', () => {
  it('normalises and tokenises mixed text', () => {
    expect(normalizeMatchText('修复 login 的 Bug 了')).toBe('修复loginbug');
    expect(matchTokens('Fix the login-token bug')).toEqual(expect.arrayContaining(['fix', 'login-token', 'login', 'token', 'bug']));
    expect(matchTokens('the and how')).toEqual([]);
    expect(matchTokens('数据库连接池')).toEqual(expect.arrayContaining(['数据库连接池', '数据', '据库', '连接池']));
  });

  it('scores request similarity: equal, containment, token overlap', () => {
    expect(requestSimilarity('Fix the login bug', 'fix the  LOGIN bug')).toBe(1);
    expect(requestSimilarity('login bug', 'fix the login bug in auth')).toBe(0.85);
    expect(requestSimilarity('deploy api docker', 'deploy web docker compose')).toBeCloseTo(2 / 4);
    // Function words are not tokens, so only cache/router/work count: below the 0.85 dedup bar.
    expect(requestSimilarity('how does the cache work', 'how does the router work')).toBe(0.5);
  });

  it('computes content Jaccard on word tokens', () => {
    expect(contentJaccard('a b cc dd ee', 'cc dd ee ff')).toBeCloseTo(3 / 4);
  });
});

describe('relevanceScore (FORMATS §8.6)', () => {
  const base = { coverage: 0.5, requestSimilarity: 0.4, hitsRequest: false, scope: 'legacy-current' as const, genericQuery: false, type: 'context' as const };
  it('weighs coverage and request similarity, with every adjustment', () => {
    expect(relevanceScore(base)).toBeCloseTo(0.55 * 0.5 + 0.45 * 0.4);
    expect(relevanceScore({ ...base, hitsRequest: true })).toBeCloseTo(0.455 + 0.1);
    expect(relevanceScore({ ...base, coverage: 1, requestSimilarity: 1, hitsRequest: true })).toBe(1);
    expect(relevanceScore({ ...base, scope: 'other' })).toBeCloseTo(0.455 * 0.35);
    expect(relevanceScore({ ...base, scope: 'current' })).toBeCloseTo(0.505);
    expect(relevanceScore({ ...base, coverage: 1, requestSimilarity: 0.3, hitsRequest: true, genericQuery: true })).toBe(0.65);
    expect(relevanceScore({ ...base, coverage: 1, requestSimilarity: 0.5, genericQuery: true })).toBeCloseTo(0.775);
    expect(relevanceScore({ ...base, type: 'entity' })).toBeCloseTo(0.375);
  });
});

describe('project scope rules', () => {
  it('classifies and tags', () => {
    expect(classifyScope(['scope:global'], 'app')).toBe('global');
    expect(classifyScope(['scope:shared'], 'app')).toBe('global');
    expect(classifyScope(['proj:app'], 'app')).toBe('current');
    expect(classifyScope(['app', 'auth'], 'app')).toBe('legacy-current');
    expect(classifyScope(['proj:other', 'app'], 'app')).toBe('other');
    expect(isProjectCompatible(['auth'], 'app')).toBe(false);
    expect(ensureScopeTags(['auth'], 'app')).toEqual(['auth', 'proj:app']);
    expect(ensureScopeTags(['scope:global'], 'app')).toEqual(['scope:global']);
  });
});

describe('InMemoryWikiRetriever', () => {
  let dir: TempDir;
  let now = 0;
  beforeEach(() => {
    dir = tempDir();
    now = 0;
  });
  afterEach(() => dir.cleanup());
  const retriever = () => new InMemoryWikiRetriever(dir.path, { projectSlug: 'app', now: () => now, rescanIntervalMs: 1_000 });

  function seed(): void {
    writeEntry(dir.path, 'contexts/debug/C001-login-token-expiry.md', { id: '"C001"', request: '"Fix login token expiring too early"', tags: ['proj:app', 'auth'] }, '# Login token\n\n## 摘要\n\nexpiresIn was 60 seconds in createSession; raised to 3600.\n');
    writeEntry(dir.path, 'contexts/debug/C002-docker-compose-ports.md', { id: '"C002"', request: '"Docker compose port conflict on 5432"', tags: ['proj:other'] }, '## 摘要\n\nPostgres port clash.\n');
    writeEntry(dir.path, 'contexts/devops/C003-release-checklist.md', { id: '"C003"', request: '"Release checklist for npm packages"', tags: ['scope:global'] }, '## 摘要\n\nbump, tag, publish\n');
    writeEntry(dir.path, 'entities/N001-session-store.md', { id: '"N001"', request: '"Session store"', type: 'entity', tags: ['proj:app'] }, '## 摘要\n\nRedis-backed session store with TTL.\n');
    writeEntry(dir.path, 'summaries/S001-login-token-expiry.md', { id: '"S001"', request: '"Fix login token expiring too early"', tags: ['proj:app'] }, '## 摘要\n\nsummary copy\n');
  }

  it('finds the relevant context, with score and matched keywords, never a summary', () => {
    seed();
    const hit = retriever().search({ text: 'the login token expires too early again', derived: true });
    expect(hit?.entryId).toBe('C001');
    expect(hit!.score).toBeGreaterThanOrEqual(0.5);
    expect(hit!.matchedKeywords).toEqual(expect.arrayContaining(['login', 'token']));
    expect(hit!.relativePath).toBe('contexts/debug/C001-login-token-expiry.md');
    expect(hit!.excerpt).toContain('expiresIn was 60 seconds');
  });

  it('applies project scope: other projects never hit, global entries do', () => {
    seed();
    const r = retriever();
    expect(r.search({ text: 'docker compose port conflict 5432' })).toBeNull();
    expect(r.search({ text: 'docker compose port conflict 5432', includeOtherProjects: true, threshold: 0.3 })?.entryId).toBe('C002');
    expect(r.search({ text: 'release checklist npm packages' })?.entryId).toBe('C003');
  });

  it('penalises entities by 0.08 and excludes the exploration\'s own entry', () => {
    seed();
    // Legacy bare-slug scope on both (no +0.05), so the scores are not clamped at 1 and the penalty shows.
    writeEntry(dir.path, 'contexts/explore/C004-session-store.md', { id: '"C004"', request: '"Session store"', tags: ['app'] }, '## 摘要\n\nRedis-backed session store with TTL.\n');
    writeEntry(dir.path, 'entities/N001-session-store.md', { id: '"N001"', request: '"Session store"', type: 'entity', tags: ['app'] }, '## 摘要\n\nRedis-backed session store with TTL.\n');
    const r = retriever();
    const both = r.searchMany({ text: 'session store', threshold: 0 });
    const ctx = both.find((m) => m.entryId === 'C004')!;
    const ent = both.find((m) => m.entryId === 'N001')!;
    expect(ctx.score - ent.score).toBeCloseTo(0.08, 5);
    writeEntry(dir.path, 'contexts/explore/C005-own.md', { id: '"C005"', request: '"what is the tracing sampler rate"', tags: ['proj:app'] }, '');
    // Own-entry exclusion, through the nested source block.
    writeFileSync(
      `${dir.path}/knowledge/contexts/explore/C005-own.md`,
      '---\nid: "C005"\nrequest: "what is the tracing sampler rate"\ntags:\n  - "proj:app"\nsource:\n  session_id: "s1"\n  exploration_id: "exp_3"\n---\n',
    );
    r.refresh();
    expect(r.search({ text: 'what is the tracing sampler rate', exclude: { sessionId: 's1', explorationId: 'exp_3' } })).toBeNull();
    expect(r.search({ text: 'what is the tracing sampler rate', exclude: { sessionId: 's1', explorationId: 'exp_4' } })?.entryId).toBe('C005');
  });

  it('caps generic "analyse the project" questions at 0.65 and ignores short queries', () => {
    writeEntry(dir.path, 'contexts/explore/C010-project.md', { id: '"C010"', request: '"Project layout of the app"', tags: ['proj:app', 'project'] }, '## 摘要\n\nanalyze project structure codebase\n');
    const r = retriever();
    const hit = r.searchMany({ text: 'analyze the project codebase', threshold: 0 })[0]!;
    expect(hit.score).toBeLessThanOrEqual(0.65);
    expect(r.search({ text: 'ab' })).toBeNull();
    expect(r.search({ text: 'abcd', derived: true })).toBeNull();
  });

  it('a deleted wiki file no longer hits, even before the next rescan', () => {
    seed();
    const r = retriever();
    expect(r.search({ text: 'login token expires too early' })?.entryId).toBe('C001');
    rmSync(`${dir.path}/knowledge/contexts/debug/C001-login-token-expiry.md`);
    expect(r.search({ text: 'login token expires too early' })).toBeNull();
  });

  it('picks up new and changed files on the next (background) rescan', async () => {
    const r = retriever();
    expect(r.search({ text: 'flaky websocket reconnect' })).toBeNull();
    writeEntry(dir.path, 'contexts/debug/C020-ws.md', { id: '"C020"', request: '"Flaky websocket reconnect"', tags: ['proj:app'] }, '');
    expect(r.search({ text: 'flaky websocket reconnect' })).toBeNull(); // within the rescan interval
    now += 1_000;
    r.search({ text: 'flaky websocket reconnect' }); // starts the background rescan
    await r.idle();
    expect(r.search({ text: 'flaky websocket reconnect' })?.entryId).toBe('C020');
    // Changed in place: re-parsed on the next rescan.
    writeEntry(dir.path, 'contexts/debug/C020-ws.md', { id: '"C020"', request: '"Flaky websocket reconnect after sleep"', tags: ['proj:app'] }, '');
    await r.refreshAsync();
    expect(r.search({ text: 'flaky websocket reconnect' })?.request).toBe('Flaky websocket reconnect after sleep');
  });

  it('reports broken frontmatter with file and line and keeps the other entries', () => {
    seed();
    writeFileSync(`${dir.path}/knowledge/contexts/debug/C030-broken.md`, '---\nid: "C030"\nrequest "no colon"\n---\n');
    writeFileSync(`${dir.path}/knowledge/contexts/debug/C031-open.md`, '---\nid: "C031"\nrequest: "never closed"\n');
    const { entries, problems } = listWikiEntries(dir.path);
    expect(entries.map((e) => e.id).sort()).toEqual(['C001', 'C002', 'C003', 'N001', 'S001']);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: expect.stringContaining('C030-broken.md'), line: 3 }),
        expect.objectContaining({ path: expect.stringContaining('C031-open.md'), line: 1 }),
      ]),
    );
    expect(retriever().problems().length).toBeGreaterThanOrEqual(2);
  });

  it('lists entries as plain documents for the knowledge index', () => {
    seed();
    const docs = listWikiDocuments(dir.path);
    const c1 = docs.find((d) => d.id === 'C001')!;
    expect(c1).toMatchObject({ title: 'Login token', type: 'context', tags: ['proj:app', 'auth'], relativePath: 'contexts/debug/C001-login-token-expiry.md' });
    expect(c1.body).toContain('expiresIn');
    expect(docs.find((d) => d.id === 'N001')!.type).toBe('entity');
  });

  it('ranks exactly as scoring every entry by FORMATS §8.6 would (the pruned index loses nothing)', () => {
    // A reference that scores every entry sharing a token with the query, the slow way.
    const keywordsOf = (e: WikiEntry) =>
      new Set([...matchTokens(e.request), ...matchTokens(`${e.title} ${e.slug.replace(/-/g, ' ')} ${e.summary}`), ...e.tags.map((t) => t.toLowerCase()), ...matchTokens(e.body.slice(0, 4_000)), ...contentTokens(e.tags.join(' '))]);
    const reference = (text: string, threshold: number, limit: number, includeOtherProjects: boolean) => {
      const q = matchTokens(text);
      const scored = listWikiEntries(dir.path)
        .entries.filter((e) => e.type !== 'summary' && (includeOtherProjects || classifyScope(e.tags, 'app') !== 'other'))
        .flatMap((e) => {
          const kw = keywordsOf(e);
          const req = new Set(matchTokens(e.request));
          const hits = q.filter((t) => kw.has(t)).length;
          if (!hits) return [];
          const score = relevanceScore({
            coverage: hits / q.length,
            requestSimilarity: requestSimilarity(text, e.request),
            hitsRequest: q.some((t) => req.has(t)),
            scope: classifyScope(e.tags, 'app'),
            genericQuery: isGenericProjectQuery(text),
            type: e.type,
          });
          return score >= threshold ? [{ id: e.id, score: Math.round(score * 1000) / 1000, raw: score }] : [];
        })
        .sort((a, b) => b.raw - a.raw || (a.id < b.id ? -1 : 1));
      return scored.slice(0, limit).map(({ id, score }) => ({ id, score }));
    };
    const words = ['cache', 'router', 'token', 'login', 'deploy', 'docker', 'queue', 'worker', 'schema', 'parser', '缓存', '数据库连接池', 'auth', 'session', 'project'];
    let seed = 3;
    const pick = () => words[(seed = (seed * 1103515245 + 12345) % 2 ** 31) % words.length]!;
    for (let i = 1; i <= 150; i += 1) {
      const request = i % 25 === 0 ? `${pick()} ${pick()}` : `Fix the ${pick()} ${pick()} in the ${pick()}`;
      const tags = i % 9 === 0 ? ['proj:other'] : i % 5 === 0 ? ['scope:global', pick()] : ['proj:app', pick()];
      const type = i % 11 === 0 ? 'entity' : undefined;
      writeEntry(dir.path, `${type ? 'entities/N' : 'contexts/debug/C'}${String(i).padStart(3, '0')}-e${i}.md`, { id: `"${type ? 'N' : 'C'}${String(i).padStart(3, '0')}"`, request: `"${request}"`, ...(type ? { type } : {}), tags }, `## 摘要\n\n${pick()} ${pick()} ${pick()} broke.\n`);
    }
    const r = retriever();
    const queries = ['why does the cache router fail', 'login token', 'Fix the docker queue in the schema', 'docker queue', '数据库连接池 缓存 问题', 'analyze the project auth', 'deploy worker parser session'];
    for (const text of queries) for (const threshold of [0, 0.25, 0.5]) for (const limit of [1, 5, 40]) for (const other of [false, true]) {
      const got = r.searchMany({ text, threshold, limit, includeOtherProjects: other }).map((m) => ({ id: m.entryId, score: m.score }));
      expect(got, `${text} @${threshold} ×${limit} other=${other}`).toEqual(reference(text, threshold, limit, other));
    }
  });
});
