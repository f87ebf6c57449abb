/**
 * Issue 16 item 4: scope and honesty. Wiki entries of another project stay
 * out unless asked; statuses read as stored; a query with no real match says
 * so; code search reads doc comments and gives a file one slot.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempRoot, writeFiller, writeKnowhowFile, writeWikiEntry } from '../../../test/helpers/knowledge.js';
import { parseSearchRequest, runSearch } from './params.js';
import { openKnowledge } from '../knowledge.js';

describe('scope: wiki entries of other projects', () => {
  it('leaves out entries tagged for another project unless --all-projects, keeps this project, global and untagged ones', async () => {
    const { dir, root } = tempRoot();
    writeFiller(root, 10);
    const slug = basename(dir).toLowerCase().replace(/[^\w]+/g, '-').replace(/^-+|-+$/g, '');
    writeWikiEntry(dir, 'contexts/deploy/C001-other.md', { id: 'C001', request: 'canary deploy', tags: ['proj:billing-service', 'canary'] }, 'Canary deploy of billing', 'Billing deploys canaries at 5 percent.', 'Other project: billing.');
    writeWikiEntry(dir, 'contexts/deploy/C002-mine.md', { id: 'C002', request: 'canary deploy', tags: [`proj:${slug}`, 'canary'], status: 'draft' }, 'Canary deploy here', 'This project deploys canaries at 1 percent.', 'This project.');
    writeWikiEntry(dir, 'contexts/deploy/C003-global.md', { id: 'C003', request: 'canary deploy', tags: ['scope:global', 'canary'] }, 'Canary deploys in general', 'Canaries catch regressions early.', 'Everyone.');
    writeWikiEntry(dir, 'contexts/deploy/C004-untagged.md', { id: 'C004', request: 'canary deploy', tags: ['canary'] }, 'Canary deploy checklist', 'Watch the error rate during a canary.', 'Untagged.');
    const k = openKnowledge({ env: process.env, workflowRoot: dir, embedder: null });
    try {
      const ids = (await k.searchHybrid('canary deploy', { limit: 10 })).results.map((r) => r.id).sort();
      expect(ids).toEqual(['wiki:C002', 'wiki:C003', 'wiki:C004']);
      const all = (await runSearch(k, parseSearchRequest({ query: 'canary deploy', allProjects: 'true' }))) as { results: Array<{ id: string }> };
      expect(all.results.map((r) => r.id).sort()).toEqual(['wiki:C001', 'wiki:C002', 'wiki:C003', 'wiki:C004']);
      // Statuses as stored: the draft says draft, not active.
      const statuses = Object.fromEntries(k.search('canary deploy', { limit: 10 }).results.map((r) => [r.id, r.status]));
      expect(statuses).toEqual({ 'wiki:C002': 'draft', 'wiki:C003': 'active', 'wiki:C004': 'active' });
    } finally {
      k.close();
    }
  });

  it('reports a knowhow decision\'s lifecycle word as stored (proposed), and deprecated entries as deprecated', () => {
    const { dir, root } = tempRoot();
    writeFiller(root, 10);
    writeKnowhowFile(root, 'DCS-20260801-queues', { title: 'Use one queue per tenant', status: 'proposed' }, 'One queue per tenant keeps noisy tenants apart.');
    writeKnowhowFile(root, 'TIP-20260801-queues-old', { title: 'Shared queue', status: 'superseded' }, 'One shared queue for all tenants.');
    const k = openKnowledge({ env: process.env, workflowRoot: dir, embedder: null });
    try {
      expect(k.search('tenant queue').results.map((r) => [r.id, r.status])).toEqual([['knowhow-dcs-20260801-queues', 'proposed']]);
      const all = k.search('tenant queue', { includeDeprecated: true, diversity: 'off' }).results;
      expect(all.find((r) => r.id === 'knowhow-tip-20260801-queues-old')!.status).toBe('superseded');
    } finally {
      k.close();
    }
  });
});

describe('honesty: a query with no real match', () => {
  it('says "no match" for stop words and for nonsense around one common word, and still finds real matches', async () => {
    const { dir, root } = tempRoot();
    writeFiller(root, 10);
    // "service" is in most entries: alone it is a real (if broad) query; beside words no entry holds it is noise.
    for (let i = 0; i < 20; i++) writeKnowhowFile(root, `TIP-20260801-svc-${i}`, { title: `Service note ${i}` }, `The service ${i} restarts on failure and logs the reason.`);
    const k = openKnowledge({ env: process.env, workflowRoot: dir, embedder: null });
    try {
      for (const q of ['the of and', 'purple monkey dishwasher service', 'zyxwvu']) {
        const r = await k.searchHybrid(q);
        expect(r.count, q).toBe(0);
        expect(r.noMatch, q).toMatch(/^No entry matches/);
      }
      const real = await k.searchHybrid('service restarts');
      expect(real.count).toBeGreaterThan(0);
      expect(real.noMatch).toBeUndefined();
      expect((await k.searchHybrid('service')).count).toBe(10);
      // A type no entry has is named, not the words: they match, the type does not; the types there are are listed.
      const filtered = await k.searchHybrid('service restarts', { type: 'nonesuch' });
      expect(filtered.count).toBe(0);
      expect(filtered.noMatch).toBe('No entry matches "service restarts": no entry has type "nonesuch". The types here: knowhow, tip.');
      // A type there is, with none of its entries holding the words: the filter is named beside the words.
      const typed = await k.searchHybrid('zyxwvu', { type: 'tip', category: 'ops' });
      expect(typed.noMatch).toBe('No entry matches "zyxwvu" among the entries with type "tip", category "ops": no entry there holds enough of its words (an entry must hold words carrying at least 5% of the query\'s weight, and stop words alone never match).');
    } finally {
      k.close();
    }
  });

  it('says there is nothing to search when the index holds no entry, instead of blaming the words', async () => {
    const { dir } = tempRoot();
    const k = openKnowledge({ env: process.env, workflowRoot: dir, embedder: null });
    try {
      const r = await k.searchHybrid('greeting');
      expect(r.count).toBe(0);
      expect(r.noMatch).toBe('No entry matches "greeting": there is no spec or knowhow entry to search here yet.');
    } finally {
      k.close();
    }
  });
});

describe('code search', () => {
  it('reads doc comments (JSDoc, //, Python docstrings) and gives a file one slot', async () => {
    const { dir } = tempRoot();
    mkdirSync(join(dir, 'src'), { recursive: true });
    writeFileSync(
      join(dir, 'src', 'upload.ts'),
      '/** Upload helpers. */\n\n/**\n * Sends a file, retrying with exponential backoff and jitter.\n */\nexport function sendFile(path: string): void {}\n\n// Cancels every pending transfer.\nexport function abortAll(): void {}\n',
    );
    writeFileSync(join(dir, 'src', 'retry.ts'), 'export function retry(): void {}\nexport const retryLimit = 3;\n');
    writeFileSync(join(dir, 'src', 'geo.py'), 'def haversine(a, b):\n    """Great-circle distance between two points on a sphere."""\n    return 0\n');
    const k = openKnowledge({ env: process.env, workflowRoot: dir, embedder: null });
    try {
      expect((await k.searchCode('backoff jitter')).results.map((r) => r.id)).toEqual(['code:src/upload.ts#sendFile']);
      expect((await k.searchCode('pending transfer')).results.map((r) => r.id)).toEqual(['code:src/upload.ts#abortAll']);
      expect((await k.searchCode('great circle distance')).results.map((r) => r.id)).toEqual(['code:src/geo.py#haversine']);
      // retry.ts, retry() and retryLimit all match: one slot for the file.
      const retry = (await k.searchCode('retry')).results;
      expect(retry.filter((r) => r.filePath === 'src/retry.ts')).toHaveLength(1);
      expect(retry[0]!.id).toBe('code:src/retry.ts#retry');
    } finally {
      k.close();
    }
  });
});
