import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempRoot, writeKnowhowFile } from '../../../test/helpers/knowledge.js';
import { MAX_SPEC_FILE_BYTES } from './specParser.js';
import { builtinSources, loadCorpus } from './corpus.js';
import { openKnowledge } from '../knowledge.js';

/**
 * A `.workflow/` folder laid out by the tool the formats come from
 * (test/fixtures/knowledge/mf-workflow): seed frontmatter, legacy headings,
 * a supersede pair, hand-written recipes with quoted values and CJK inline
 * tags, a run ledger, and the caches it leaves behind.
 */
describe('reading a .workflow folder in the other tool format', () => {
  it('yields the canonical ids, graph ids and statuses that tool gives', () => {
    const { root } = tempRoot('mf-workflow');
    const { entries, findings } = loadCorpus(builtinSources(root));
    expect(findings).toEqual([]);
    const ids = entries.map((e) => e.id).sort();
    expect(ids).toEqual([
      'knowhow-rcp-20260716-pi-maestro-flow-cli',
      'knowhow-rcp-20260718-release-checklist',
      'knowhow-rcp-20260812-install-cli',
      'knowhow-rcp-20260920-github-actions-tauri',
      // tag blocks first, then the legacy heading
      'spec:project:coding-conventions-001',
      'spec:project:coding-conventions-002',
      'spec:project:coding-conventions-003',
      'spec:project:coding-conventions-004',
      'spec:project:learnings-001',
      'spec:project:learnings-002',
      'spec:project:quality-rules-001',
    ]);
    const byId = new Map(entries.map((e) => [e.id, e]));
    expect(byId.get('spec:project:coding-conventions-004')!.title).toBe('Barrel files re-export types only');
    expect(byId.get('spec:project:coding-conventions-001')!.aliases).toEqual(expect.arrayContaining(['S-20260611-k3x9', 'spec:S-20260611-k3x9']));
    expect(byId.get('spec:project:quality-rules-001')!.category).toBe('review');
    const recipe = byId.get('knowhow-rcp-20260718-release-checklist')!;
    expect(recipe).toMatchObject({ graphId: 'knowhow:rcp-20260718-release-checklist', type: 'recipe', category: 'release', title: 'Release checklist: tag, build, publish', date: '2026-07-18T10:20:00+08:00' });
    expect(recipe.tags).toEqual(['发布', 'release', 'npm']);
    expect(byId.get('knowhow-rcp-20260812-install-cli')!.aliases).toContain('rcp-20260812-install-cli');
    expect(byId.get('knowhow-rcp-20260920-github-actions-tauri')!.references).toEqual(['.github/workflows/release.yml']);
  });

  it('searches it, hides superseded entries, and loads every returned id', async () => {
    const { dir } = tempRoot('mf-workflow');
    const k = openKnowledge({ env: process.env, workflowRoot: dir });
    try {
      const errs = k.search('errors cause', { limit: 10 });
      expect(errs.results.map((r) => r.id)).toEqual(['spec:project:coding-conventions-003']);
      const withOld = k.search('errors cause', { limit: 10, includeDeprecated: true });
      expect(withOld.results.map((r) => r.id).sort()).toEqual(['spec:project:coding-conventions-002', 'spec:project:coding-conventions-003']);
      const install = k.search('install cli', { limit: 10 });
      expect(install.results[0]!.id).toBe('knowhow-rcp-20260812-install-cli');
      expect(install.results.map((r) => r.id)).not.toContain('knowhow-rcp-20260716-pi-maestro-flow-cli');
      const cjk = k.search('索引重建');
      expect(cjk.results[0]?.id).toBe('spec:project:learnings-002');
      for (const r of [...errs.results, ...install.results, ...cjk.results]) expect((await k.load(r.id)).id).toBe(r.id);
      // the run ledger's consumed input is a consumed-by edge on the entry it names
      expect(k.neighbors('spec:project:coding-conventions-001', 'consumed-by').map((n) => n.id).sort()).toEqual(['run:run-6401c7fc128f', 'task:20260922-odyssey-ui-app']);
      expect(k.health().ok).toBe(true);
    } finally {
      k.close();
    }
  });
});

describe('a knowhow file past the size limit', () => {
  it('is a file-too-large finding and no entry, as a spec file is; one at the limit is read', () => {
    const { root } = tempRoot();
    writeKnowhowFile(root, 'DOC-big', { title: 'Big' }, 'x'.repeat(MAX_SPEC_FILE_BYTES));
    writeKnowhowFile(root, 'DOC-fits', { title: 'Fits' }, '');
    const [big, fits] = ['DOC-big', 'DOC-fits'].map((stem) => join(root.workflowDir, 'knowhow', `${stem}.md`)) as [string, string];
    writeFileSync(fits, readFileSync(fits, 'utf8') + 'y'.repeat(MAX_SPEC_FILE_BYTES - statSync(fits).size));
    const { entries, findings } = loadCorpus(builtinSources(root));
    expect(entries.map((e) => e.title)).toEqual(['Fits']);
    expect(findings).toEqual([{ file: big, line: 1, severity: 'error', code: 'file-too-large', message: `file is ${statSync(big).size} bytes, over the ${MAX_SPEC_FILE_BYTES}-byte limit; not indexed` }]);
  });
});
