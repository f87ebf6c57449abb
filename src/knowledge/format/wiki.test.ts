import { rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Fastify from 'fastify';
import { installErrorHandler } from '../../api/errors.js';
import { describe, expect, it } from 'vitest';
import { tempRoot, writeFiller, writeKnowhowFile, writeWikiEntry } from '../../../test/helpers/knowledge.js';
import { knowledgeRoutes } from '../../api/routes/knowledge.js';
import { openKnowledge } from '../knowledge.js';
import { createKnowledgePool } from '../pool.js';
import { wikiRootFor } from './wikiSource.js';

function wikiFixture() {
  const t = tempRoot();
  writeFiller(t.root, 10);
  writeWikiEntry(t.dir, 'contexts/build-setup/C001-vite-build-cache.md', { id: 'C001', request: 'why is the vite build slow', tags: ['vite', 'build'], intentKey: 'build-setup' }, 'Vite build cache misses', 'The vite build cache misses after a lockfile change.', 'Clear node_modules/.vite and rebuild; the cache key includes the lockfile hash.');
  writeWikiEntry(t.dir, 'entities/N001-postgres-pool.md', { id: 'N001', request: 'what is the postgres pool', type: 'entity', tags: ['postgres'] }, 'Postgres connection pool', 'The service keeps a pool of 10 postgres connections.', 'Pool size is set by PG_POOL_MAX.');
  writeWikiEntry(t.dir, 'summaries/S001-session-recap.md', { id: 'S001', request: 'recap of the session', type: 'summary', tags: ['recap'] }, 'Session recap: vite migration', 'We migrated the build to vite and fixed the cache.', 'Steps taken during the vite migration.');
  writeKnowhowFile(t.root, 'TIP-20260801-vite', { title: 'Vite dev server tip', tags: ['vite'] }, 'Run the vite dev server with --force after a dependency bump.');
  return t;
}

describe('the observer wiki as a knowledge source', () => {
  it('indexes wiki entries: search finds them with canonical ids that load by every alias', async () => {
    const { dir } = wikiFixture();
    const k = openKnowledge({ env: process.env, workflowRoot: dir });
    try {
      const res = k.search('vite build cache', { limit: 10, decay: false });
      const wiki = res.results.filter((r) => r.kind === 'wiki');
      expect(wiki.map((r) => r.id)).toEqual(expect.arrayContaining(['wiki:C001', 'wiki:S001']));
      expect(res.results.some((r) => r.kind === 'knowhow')).toBe(true);
      const c1 = res.results.find((r) => r.id === 'wiki:C001')!;
      expect(c1).toMatchObject({ graphId: 'wiki:C001', type: 'context', name: 'Vite build cache misses', category: 'build-setup', summary: 'The vite build cache misses after a lockfile change.' });
      expect(c1.aliases).toEqual(expect.arrayContaining(['C001', 'C001-vite-build-cache', 'contexts/build-setup/C001-vite-build-cache.md', 'wiki/knowledge/contexts/build-setup/C001-vite-build-cache.md']));
      for (const ref of ['wiki:C001', ...c1.aliases]) {
        const loaded = await k.load(ref);
        expect(loaded.id).toBe('wiki:C001');
      }
      const entry = (await k.load('N001')) as { body: string; kind: string };
      expect(entry.kind).toBe('wiki');
      expect(entry.body).toContain('PG_POOL_MAX');
      await expect(k.load('wiki:C999')).rejects.toThrow(/Unknown knowledge id "wiki:C999".*Nearest known ids/);
    } finally {
      k.close();
    }
  });

  it('keeps filters and type isolation: --type wiki, a wiki type, a category; --type knowhow never returns wiki', async () => {
    const { dir } = wikiFixture();
    const k = openKnowledge({ env: process.env, workflowRoot: dir });
    try {
      const wikiOnly = k.search('vite', { type: 'wiki', limit: 20 });
      expect(wikiOnly.count).toBeGreaterThan(0);
      expect(wikiOnly.results.every((r) => r.kind === 'wiki')).toBe(true);
      expect(k.search('vite', { type: 'knowhow', limit: 20 }).results.map((r) => r.kind)).toEqual(['knowhow']);
      expect(k.search('vite postgres recap', { type: 'entity', limit: 20 }).results.map((r) => r.id)).toEqual(['wiki:N001']);
      expect(k.search('vite', { category: 'build-setup', limit: 20 }).results.map((r) => r.id)).toEqual(['wiki:C001']);
      expect(k.search('vite', { tag: 'recap', limit: 20 }).results.map((r) => r.id)).toEqual(['wiki:S001']);
      const kg = await k.searchKg('vite', { type: 'knowhow', code: false });
      expect(kg.results.length).toBeGreaterThan(0);
      expect(kg.results.every((r) => r.sourceType === 'knowhow')).toBe(true);
      const kgWiki = await k.searchKg('vite', { type: 'wiki', code: false });
      expect(kgWiki.results.length).toBeGreaterThan(0);
      expect(kgWiki.results.every((r) => r.sourceType === 'wiki')).toBe(true);
      for (const r of kgWiki.results) expect((await k.load(r.id)).id).toBe(r.id);
      // A deprecated wiki entry is hidden unless asked for.
      writeWikiEntry(dir, 'contexts/build-setup/C002-old-vite-note.md', { id: 'C002', request: 'old vite note', status: 'deprecated', tags: ['vite'] }, 'Old vite note', 'Outdated.', 'vite vite vite');
      expect(k.search('vite', { limit: 20 }).results.some((r) => r.id === 'wiki:C002')).toBe(false);
      expect(k.search('vite', { limit: 20, includeDeprecated: true }).results.some((r) => r.id === 'wiki:C002')).toBe(true);
    } finally {
      k.close();
    }
  });

  it('applies MMR to wiki results: a near-duplicate entry gives way to a relevant, different one', () => {
    const { dir, root } = tempRoot();
    writeFiller(root, 30);
    writeWikiEntry(dir, 'contexts/net/C001-upload-retry.md', { id: 'C001', request: 'upload retry policy', tags: ['upload', 'retry', 'policy'] }, 'Upload retry policy', 'upload retry policy backoff jitter', 'upload retry policy backoff jitter');
    writeWikiEntry(dir, 'contexts/net/C002-upload-retry-again.md', { id: 'C002', request: 'upload retry policy', tags: ['upload', 'retry', 'policy'] }, 'Upload retry policy', 'upload retry policy backoff jitter', 'upload retry policy backoff jitter.');
    writeWikiEntry(dir, 'contexts/net/C003-upload-budget.md', { id: 'C003', request: 'upload retry budget', tags: ['upload', 'retry', 'budget'] }, 'Upload retry budget', 'upload retry budget per minute', 'upload retry budget per minute and per hour');
    const k = openKnowledge({ env: process.env, workflowRoot: dir });
    try {
      const off = k.search('upload retry', { limit: 2, diversity: 'off', decay: false });
      expect(off.results.map((r) => r.id).sort()).toEqual(['wiki:C001', 'wiki:C002']);
      const mmr = k.search('upload retry', { limit: 2, decay: false });
      expect(mmr.results.map((r) => r.selectionReason)).toEqual(['relevance', 'diversity']);
      expect(mmr.results[1]!.id).toBe('wiki:C003');
    } finally {
      k.close();
    }
  });

  it('follows wiki file changes incrementally, reports a broken wiki file in health and still indexes the rest', () => {
    const { dir } = wikiFixture();
    const k = openKnowledge({ env: process.env, workflowRoot: dir });
    try {
      expect(k.search('postgres', { type: 'wiki' }).results.map((r) => r.id)).toEqual(['wiki:N001']);
      // A broken file: no frontmatter at all; another with binary content.
      const broken = join(dir, 'wiki', 'knowledge', 'contexts', 'build-setup', 'C009-broken.md');
      writeFileSync(broken, '# just a heading, postgres\n\nno frontmatter here\n');
      writeFileSync(join(dir, 'wiki', 'knowledge', 'entities', 'N009-binary.md'), Buffer.from([0x2d, 0x2d, 0x2d, 0x0a, 0x00, 0x01, 0x02]));
      const huge = join(dir, 'wiki', 'knowledge', 'summaries', 'S009-huge.md');
      writeFileSync(huge, `---\nid: "S009"\nrequest: "huge"\n---\n\n# Huge\n${'postgres pgbouncer '.repeat(600_000)}`);
      const edited = writeWikiEntry(dir, 'entities/N001-postgres-pool.md', { id: 'N001', request: 'what is the postgres pool', type: 'entity', tags: ['postgres'] }, 'Postgres connection pool', 'The pool now uses pgbouncer.', 'Pool size is set by PG_POOL_MAX; pgbouncer sits in front.');
      const later = new Date(Date.now() + 5000);
      utimesSync(edited, later, later);
      const sync = k.sync();
      expect(sync.changedFiles).toBe(4);
      expect(k.search('pgbouncer').results.map((r) => r.id)).toEqual(['wiki:N001']);
      const h = k.health('wiki');
      expect(h.ok).toBe(false);
      expect(h.entries).toBe(3);
      expect(h.findings).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ file: broken, line: 1, severity: 'error', message: expect.stringMatching(/no frontmatter/) }),
          expect.objectContaining({ file: join(dir, 'wiki', 'knowledge', 'entities', 'N009-binary.md'), severity: 'error', code: 'wiki-binary' }),
          expect.objectContaining({ file: huge, line: 1, severity: 'error', code: 'file-too-large' }),
        ]),
      );
      // spec health is not polluted by wiki findings
      expect(k.health('spec').findings.some((f) => f.file.includes('/wiki/'))).toBe(false);
      // The rest is still indexed and searchable.
      expect(k.search('vite build cache', { type: 'wiki' }).results.map((r) => r.id)).toContain('wiki:C001');
      // Removing a file removes its entry and its aliases.
      rmSync(join(dir, 'wiki', 'knowledge', 'summaries', 'S001-session-recap.md'));
      expect(k.sync().removedFiles).toBe(1);
      expect(k.resolveId('S001')).toBeNull();
      expect(k.search('recap', { type: 'wiki' }).count).toBe(0);
    } finally {
      k.close();
    }
  });

  it('keeps both entries of a duplicated id, reports it, and gives the id back when the other file goes', () => {
    const { dir } = wikiFixture();
    const copy = writeWikiEntry(dir, 'contexts/build-setup/C001-z-copy.md', { id: 'C001', request: 'vite copy' }, 'Vite cache copy', 'A hand-made copy.', 'copied zebra text');
    const k = openKnowledge({ env: process.env, workflowRoot: dir });
    try {
      expect(k.search('zebra').results.map((r) => r.id)).toEqual(['wiki:C001-z-copy']);
      expect(k.search('lockfile').results.map((r) => r.id)).toEqual(['wiki:C001']);
      expect(k.health('wiki').findings).toEqual([expect.objectContaining({ file: copy, severity: 'error', code: 'wiki-duplicate-id' })]);
      rmSync(join(dir, 'wiki', 'knowledge', 'contexts', 'build-setup', 'C001-vite-build-cache.md'));
      expect(k.search('zebra').results.map((r) => r.id)).toEqual(['wiki:C001']);
      expect(k.search('lockfile').count).toBe(0);
      expect(k.health('wiki').ok).toBe(true);
      // A new file sorting first takes the id over; the other one moves to its stem, nothing is lost.
      writeWikiEntry(dir, 'contexts/a-first/C001-early.md', { id: 'C001', request: 'early' }, 'Early entry', 'early', 'early yak words');
      expect(k.search('yak').results.map((r) => r.id)).toEqual(['wiki:C001']);
      expect(k.search('zebra').results.map((r) => r.id)).toEqual(['wiki:C001-z-copy']);
      expect(k.resolveId('C001-z-copy')).toBe('wiki:C001-z-copy');
      expect(k.resolveId('C001')).toBe('wiki:C001');
    } finally {
      k.close();
    }
  });

  it('reads the wiki named by FLOW_WIKI_DIR unless confined to a workflow root', () => {
    const { dir, root } = tempRoot();
    expect(wikiRootFor(root, { FLOW_WIKI_DIR: '/elsewhere' })).toBe(join(dir, 'wiki'));
    expect(wikiRootFor({ ...root, confined: false }, { FLOW_WIKI_DIR: '/elsewhere' })).toBe('/elsewhere');
    expect(wikiRootFor({ ...root, confined: false }, { FLOW_ROOT_DIR: '/r' })).toBe('/r/wiki');
    expect(wikiRootFor({ ...root, confined: false }, {})).toBe(join(dir, 'wiki'));
    const other = tempRoot();
    writeWikiEntry(other.dir, 'entities/N001-far.md', { id: 'N001', request: 'far away note', type: 'entity' }, 'Far away note', 'zebra', 'zebra');
    const k = openKnowledge({ workflowRoot: dir, env: { ...process.env, FLOW_WIKI_DIR: join(other.dir, 'wiki') } });
    try {
      expect(k.search('zebra').count).toBe(0);
    } finally {
      k.close();
    }
    const explicit = openKnowledge({ env: process.env, workflowRoot: dir, wikiRoot: join(other.dir, 'wiki') });
    try {
      expect(explicit.search('zebra').results.map((r) => r.id)).toEqual(['wiki:N001']);
    } finally {
      explicit.close();
    }
  });

  it('serves wiki results at GET /api/knowledge/search and entry reads, identical to the in-process search', async () => {
    const { dir } = wikiFixture();
    const local = openKnowledge({ env: process.env, workflowRoot: dir });
    const expected = local.search('vite build cache', { readOnlyProbe: true, type: 'wiki' });
    local.close();
    expect(expected.count).toBeGreaterThan(0);
    const pool = createKnowledgePool({ env: process.env });
    const app = Fastify();
    installErrorHandler(app, () => {}); // the API's one error handler, as the daemon installs it
    await app.register(knowledgeRoutes, { pool });
    try {
      const res = await app.inject({ method: 'GET', url: `/api/knowledge/search?q=${encodeURIComponent('vite build cache')}&type=wiki&readOnlyProbe=true&root=${encodeURIComponent(dir)}` });
      expect(res.json()).toEqual({ ...JSON.parse(JSON.stringify(expected)), retrieval: 'lexical', codeIndex: 'skipped', sourceWeights: { wiki: 0.6, code: 0.4, reason: 'default' } });
      const entry = await app.inject({ method: 'GET', url: `/api/knowledge/entries/C001?root=${encodeURIComponent(dir)}` });
      expect(entry.json()).toMatchObject({ id: 'wiki:C001', kind: 'wiki', status: 'active' });
      const health = await app.inject({ method: 'GET', url: `/api/knowledge/health?kind=wiki&root=${encodeURIComponent(dir)}` });
      expect(health.json()).toMatchObject({ ok: true, entries: 3 });
    } finally {
      await app.close();
      pool.stop();
    }
  });
});
