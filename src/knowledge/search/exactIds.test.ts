/**
 * Issue 16 item 2, "exact id matches still win": a query that is or holds an
 * entry's id or alias puts that entry first (ids are not in the text index,
 * so before this they were found only by accident), under the same filters
 * as every other result; a word that only looks like an id is a word.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempRoot, writeFiller, writeKnowhowFile, writeWikiEntry, type TempRoot } from '../../../test/helpers/knowledge.js';
import { openKnowledge } from '../knowledge.js';

const SID = 'S-20260922-0acd2a63ab4f9f01';
const OLD_SID = 'S-20260612-q0w1';

/** A spec file of two entries: one active, named by SID; one deprecated, named by OLD_SID. */
function writeSpecs(root: TempRoot['root']): void {
  const dir = join(root.workflowDir, 'specs');
  mkdirSync(dir, { recursive: true });
  const entry = (sid: string, title: string, body: string, extra = '') =>
    [`<spec-entry category="coding" keywords="errors" date="2026-09-22" sid="${sid}" title="${title}"${extra}>`, '', `### ${title}`, '', body, '', '</spec-entry>', ''].join('\n');
  writeFileSync(
    join(dir, 'coding-conventions.md'),
    [
      '---',
      'title: "Coding conventions"',
      'category: coding',
      '---',
      '',
      '# Coding conventions',
      '',
      '## Entries',
      '',
      entry(SID, 'Coerce unknown errors in one place', 'Every catch of an unknown value goes through coerceError(err).'),
      entry(OLD_SID, 'Wrap errors with cause', 'Use new Error(msg, { cause }) when rethrowing.', ' status="deprecated"'),
    ].join('\n'),
  );
}

/** Filler, five release notes that own the words "release checklist", the specs, and two wiki entries (this project's and another's). */
function corpus(): TempRoot & { slug: string } {
  const t = tempRoot();
  writeFiller(t.root, 20);
  for (let i = 0; i < 5; i++) writeKnowhowFile(t.root, `RCP-20260801-release-${i}`, { title: `Release checklist ${i}` }, `Before a release, walk the release checklist step ${i}.`);
  writeKnowhowFile(t.root, 'TIP-20260801-rollback', { title: 'Rolling back a deploy' }, 'Keep the previous image tagged for a week.');
  writeSpecs(t.root);
  const slug = basename(t.dir).toLowerCase().replace(/[^\w]+/g, '-').replace(/^-+|-+$/g, '');
  writeWikiEntry(t.dir, 'contexts/ops/C001-other.md', { id: 'C001', request: 'billing', tags: ['proj:billing-service'] }, 'Billing retries', 'Billing retries three times.', 'Other project.');
  writeWikiEntry(t.dir, 'contexts/ops/C002-mine.md', { id: 'C002', request: 'cache', tags: [`proj:${slug}`] }, 'Vite build cache', 'The build cache lives in node_modules/.vite.', 'This project.');
  return { ...t, slug };
}

const SPEC_ID = 'spec:project:coding-conventions-001';

describe('exact id matches win', () => {
  it('puts the entry a query names by id or alias first, with diversity on and off', async () => {
    const { dir } = corpus();
    const k = openKnowledge({ env: process.env, workflowRoot: dir, embedder: null });
    try {
      const refs: Array<[string, string]> = [
        [SID, SPEC_ID],
        [`spec:${SID}`, SPEC_ID],
        ['TIP-20260801-rollback', 'knowhow-tip-20260801-rollback'],
        ['tip-20260801-rollback', 'knowhow-tip-20260801-rollback'],
        ['wiki:C002', 'wiki:C002'],
        ['C002', 'wiki:C002'],
      ];
      for (const [ref, id] of refs) {
        for (const diversity of ['balanced', 'off'] as const) {
          const page = k.search(ref, { diversity, readOnlyProbe: true });
          expect(page.results[0]?.id, `${ref} ${diversity}`).toBe(id);
          expect(page.results[0]!.score).toBe(1);
          expect(page.noMatch).toBeUndefined();
        }
      }
      // The default search (mixed with code) keeps it first too.
      expect((await k.searchHybrid(SID, { readOnlyProbe: true })).results[0]!.id).toBe(SPEC_ID);
    } finally {
      k.close();
    }
  });

  it('puts a named entry first among other words, then the ranked page without it, several in query order', () => {
    const { dir } = corpus();
    const k = openKnowledge({ env: process.env, workflowRoot: dir, embedder: null });
    try {
      const plain = k.search('release checklist', { readOnlyProbe: true }).results.map((r) => r.id);
      const page = k.search(`release checklist ${SID}`, { readOnlyProbe: true });
      expect(page.results[0]!.id).toBe(SPEC_ID);
      const rest = page.results.slice(1).map((r) => r.id);
      expect(rest.slice(0, 3).every((id) => id.startsWith('knowhow-rcp-20260801-release-'))).toBe(true);
      expect(new Set(page.results.map((r) => r.id)).size).toBe(page.results.length);
      expect(page.results.map((r) => r.rank)).toEqual(page.results.map((_, i) => i + 1));
      expect(plain[0]).not.toBe(SPEC_ID);
      // Two named entries: in the order the query names them, also when one is named twice.
      const two = k.search(`wiki:C002 release ${SID} C002`, { readOnlyProbe: true }).results.map((r) => r.id);
      expect(two.slice(0, 2)).toEqual(['wiki:C002', SPEC_ID]);
      expect(two.filter((id) => id === 'wiki:C002')).toHaveLength(1);
      // A page of one holds the named entry.
      expect(k.search(`release checklist ${SID}`, { limit: 1, readOnlyProbe: true }).results.map((r) => r.id)).toEqual([SPEC_ID]);
    } finally {
      k.close();
    }
  });

  it('leaves a named entry out when the filters leave it out (type, status, project scope, --kg type isolation)', async () => {
    const { dir } = corpus();
    const k = openKnowledge({ env: process.env, workflowRoot: dir, embedder: null });
    try {
      const ids = (q: string, o: Parameters<typeof k.search>[1] = {}) => k.search(q, { readOnlyProbe: true, ...o }).results.map((r) => r.id);
      expect(ids(`${SID} release`, { type: 'knowhow' })).not.toContain(SPEC_ID);
      expect(ids(`${SID} release`, { type: 'spec' })[0]).toBe(SPEC_ID);
      // Deprecated: out by default, first when deprecated entries are asked for.
      expect(ids(OLD_SID)).not.toContain('spec:project:coding-conventions-002');
      expect(ids(OLD_SID, { includeDeprecated: true })[0]).toBe('spec:project:coding-conventions-002');
      // Another project's wiki entry: out unless --all-projects.
      expect(ids('wiki:C001')).not.toContain('wiki:C001');
      expect(ids('wiki:C001', { allProjects: true })[0]).toBe('wiki:C001');
      // --kg: first among all sources; a type names the sources queried at all.
      const kg = async (q: string, type?: string) => (await k.searchKg(q, { type, code: false })).results.map((r) => r.id);
      expect((await kg(`release ${SID}`))[0]).toBe(SPEC_ID);
      expect(await kg(`release ${SID}`, 'knowhow')).not.toContain(SPEC_ID);
      expect((await kg(`release ${SID}`, 'spec'))[0]).toBe(SPEC_ID);
      expect(await kg(SID, 'code')).toEqual([]);
    } finally {
      k.close();
    }
  });

  it('searches an id-shaped word that names nothing as words, without an error', () => {
    const { dir } = corpus();
    const k = openKnowledge({ env: process.env, workflowRoot: dir, embedder: null });
    try {
      for (const q of ['S-20261399-nothere', 'wiki:', 'wiki:C999 release checklist', '"S-2026-" (release) checklist:', 'knowhow/../../etc/passwd release']) {
        const page = k.search(q, { readOnlyProbe: true });
        expect(page.named, q).toBeUndefined();
        expect(page.results.map((r) => r.id).filter((id) => !id.startsWith('knowhow-rcp-')), q).toEqual([]);
      }
      expect(k.search('wiki:C999 release checklist', { readOnlyProbe: true }).results.length).toBeGreaterThan(0);
    } finally {
      k.close();
    }
  });

  it('keeps a named entry first on the mixed page although an id query weighs code above knowledge', async () => {
    const { dir } = corpus();
    mkdirSync(join(dir, 'src'), { recursive: true });
    writeFileSync(join(dir, 'src', 'release.ts'), 'export function releaseChecklist(): string[] {\n  return [];\n}\n');
    const k = openKnowledge({ env: process.env, workflowRoot: dir, embedder: null });
    try {
      await k.syncCode();
      const page = await k.searchHybrid(`releaseChecklist ${SID}`, { readOnlyProbe: true });
      expect(page.codeIndex).toBe('ok');
      expect(page.results.map((r) => [r.source, r.id]).slice(0, 2)).toEqual([
        ['wiki', SPEC_ID],
        ['code', expect.stringContaining('releaseChecklist')],
      ]);
    } finally {
      k.close();
    }
  });
});
