import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempRoot, writeFiller, writeKnowhowFile } from '../../../test/helpers/knowledge.js';
import { openKnowledge } from '../knowledge.js';
import { appendSpecEntry } from '../format/specWriter.js';

function project() {
  const t = tempRoot();
  writeFiller(t.root, 20);
  const src = join(t.dir, 'src');
  mkdirSync(join(src, 'net'), { recursive: true });
  writeFileSync(join(src, 'net', 'retry.ts'), `import { sleep } from './sleep.js';\nexport interface RetryOptions { attempts: number }\nexport async function retryWithBackoff(fn: () => Promise<void>, o: RetryOptions) {\n  for (let i = 0; i < o.attempts; i++) await sleep(i);\n}\nexport const RETRY_LIMIT = 5;\n`);
  writeFileSync(join(src, 'net', 'sleep.ts'), `export function sleep(ms: number) { return new Promise((r) => setTimeout(r, ms)); }\n`);
  writeFileSync(join(src, 'client.js'), `const { retryWithBackoff } = require('./net/retry.js');\nmodule.exports = { go: () => retryWithBackoff };\n`);
  mkdirSync(join(t.dir, 'node_modules', 'dep'), { recursive: true });
  writeFileSync(join(t.dir, 'node_modules', 'dep', 'retry.js'), 'export function retryIgnored() {}\n');
  appendSpecEntry(t.root, { category: 'arch', title: 'Retry at the edge only', content: 'retry in the client, never in the core', keywords: ['retry'] });
  writeKnowhowFile(t.root, 'RCP-20260801-retry-recipe', { title: 'Retry recipe', tags: ['retry'] }, 'how to retry uploads');
  writeKnowhowFile(t.root, 'TIP-20260801-retry-tip', { title: 'Retry tip', tags: ['retry'] }, 'retry with jitter');
  return t;
}

describe('the code graph (TypeScript compiler API)', () => {
  it('indexes files, exported symbols and imports, skipping node_modules', async () => {
    const { dir } = project();
    const k = openKnowledge({ env: process.env, workflowRoot: dir });
    try {
      const res = await k.searchCode('retryWithBackoff');
      expect(res.codeIndex).toBe('ok');
      expect(res.results[0]).toMatchObject({ id: 'code:src/net/retry.ts#retryWithBackoff', kind: 'function', filePath: 'src/net/retry.ts', line: 3, score: 1 });
      expect((await k.searchCode('retry', { limit: 50 })).results.map((r) => r.id)).not.toContain('code:node_modules/dep/retry.js#retryIgnored');
      const file = await k.load('file:src/net/retry.ts');
      expect(file).toMatchObject({ kind: 'file' });
      expect((file as { symbols: Array<{ name: string }> }).symbols.map((s) => s.name)).toEqual(['RetryOptions', 'retryWithBackoff', 'RETRY_LIMIT']);
      expect((file as { imports: unknown[] }).imports).toEqual([{ spec: './sleep.js', resolved: 'src/net/sleep.ts' }]);
      expect((file as { importedBy: string[] }).importedBy).toEqual(['src/client.js']);
    } finally {
      k.close();
    }
  });

  it('parses again only what changed: a quiet sync parses nothing, a deleted file leaves the graph', async () => {
    const { dir } = project();
    const k = openKnowledge({ env: process.env, workflowRoot: dir });
    try {
      expect(await k.syncCode()).toMatchObject({ files: 3, changed: 3 });
      expect(await k.syncCode()).toMatchObject({ files: 3, changed: 0 });
      writeFileSync(join(dir, 'src', 'net', 'sleep.ts'), `export function sleep(ms: number) { return ms; }\nexport function nap() {}\n`);
      expect(await k.syncCode()).toMatchObject({ changed: 1 });
      expect((await k.searchCode('nap')).results[0]).toMatchObject({ id: 'code:src/net/sleep.ts#nap' });
      rmSync(join(dir, 'src', 'client.js'));
      expect(await k.syncCode()).toMatchObject({ files: 2, changed: 0 });
      expect(await k.load('file:src/net/retry.ts')).toMatchObject({ importedBy: [] });
    } finally {
      k.close();
    }
  });
});

describe('--kg search', () => {
  it('isolates types: --type knowhow never returns code or spec nodes, and every id loads', async () => {
    const { dir } = project();
    const k = openKnowledge({ env: process.env, workflowRoot: dir });
    try {
      const all = await k.searchKg('retry', { limit: 10 });
      expect(new Set(all.results.map((r) => r.sourceType))).toEqual(new Set(['spec', 'knowhow', 'codegraph']));
      expect(all.engine).toBe('maestrograph');
      const knowhow = await k.searchKg('retry', { type: 'knowhow', limit: 10 });
      expect(knowhow.results.map((r) => r.sourceType)).toEqual(['knowhow', 'knowhow']);
      expect(knowhow.summary).toMatchObject({ codeSymbols: 0, specRules: 0, knowhowDocs: 2 });
      const recipes = await k.searchKg('retry', { type: 'recipe', limit: 10 });
      expect(recipes.results.map((r) => r.id)).toEqual(['knowhow-rcp-20260801-retry-recipe']);
      const spec = await k.searchKg('retry', { type: 'spec', limit: 10 });
      expect(spec.results.map((r) => r.sourceType)).toEqual(['spec']);
      for (const r of all.results) expect((await k.load(r.id)).id).toBe(r.id);
    } finally {
      k.close();
    }
  });

  it('caps each source at ceil(limit/2) while other sources have results', async () => {
    const { dir, root } = project();
    for (let i = 0; i < 6; i++) writeKnowhowFile(root, `TIP-20260801-retry-more-${i}`, { title: `Retry more ${i}`, tags: ['retry'] }, 'retry retry');
    const k = openKnowledge({ env: process.env, workflowRoot: dir });
    try {
      const res = await k.searchKg('retry', { limit: 4 });
      expect(res.results.filter((r) => r.sourceType === 'knowhow').length).toBeLessThanOrEqual(2);
      expect(res.count).toBe(4);
    } finally {
      k.close();
    }
  });
});

describe('MaestroGraph traversal', () => {
  it('walks the evolution chain both ways without revisiting', async () => {
    const { dir, root } = tempRoot();
    const { supersedeSpec } = await import('../format/specWriter.js');
    for (const s of ['A', 'B', 'C']) appendSpecEntry(root, { category: 'coding', title: `Rule ${s}`, content: s, keywords: ['rule'], sid: `S-${s}` });
    supersedeSpec(root, 'S-A', 'S-B');
    supersedeSpec(root, 'S-B', 'S-C');
    const k = openKnowledge({ env: process.env, workflowRoot: dir });
    try {
      const chain = k.traverse('S-B', 10, 'supersedes').map((c) => [c.direction, c.id, c.depth]);
      expect(chain).toEqual([
        ['out', 'spec:project:coding-conventions-001', 1],
        ['in', 'spec:project:coding-conventions-003', 1],
      ]);
      expect(k.traverse('S-C', 10, 'supersedes').map((c) => [c.id, c.depth])).toEqual([
        ['spec:project:coding-conventions-002', 1],
        ['spec:project:coding-conventions-001', 2],
      ]);
    } finally {
      k.close();
    }
  });
});
