import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { tempRoot, writeFiller, writeKnowhowFile } from '../../../test/helpers/knowledge.js';
import { openKnowledge } from '../knowledge.js';
import { INDEX_FILE } from '../index/store.js';
import { appendSpecEntry, deprecateSpec, supersedeSpec } from '../format/specWriter.js';

function open(dir: string, extra: Partial<Parameters<typeof openKnowledge>[0]> = {}) {
  return openKnowledge({ workflowRoot: dir, env: process.env, ...extra });
}

describe('filters are applied before the candidate cut', () => {
  it('finds weak matches of the filtered category that a filter-after-cut would never see', () => {
    const { dir, root } = tempRoot();
    writeFiller(root, 20);
    for (let i = 0; i < 60; i++) writeKnowhowFile(root, `TIP-20260801-cache-${i}`, { title: `Cache layer ${i}`, tags: ['cache'], category: 'coding' }, 'cache cache cache invalidation');
    for (let i = 0; i < 3; i++) writeKnowhowFile(root, `TIP-20260801-arch-${i}`, { title: `Service boundary ${i}`, category: 'arch' }, `long unrelated text about services ${'words '.repeat(40)} and a cache mention`);
    const k = open(dir);
    try {
      // What a cut-then-filter pipeline would see: the top 40 unfiltered candidates (limit 3 → 40 candidates).
      const unfiltered = k.search('cache', { limit: 40, diversity: 'off', readOnlyProbe: true });
      expect(unfiltered.results.filter((r) => r.category === 'arch')).toHaveLength(0);
      const filtered = k.search('cache', { limit: 3, category: 'arch' });
      expect(filtered.results.map((r) => r.id).sort()).toEqual(['knowhow-tip-20260801-arch-0', 'knowhow-tip-20260801-arch-1', 'knowhow-tip-20260801-arch-2']);
      expect(filtered.filtersApplied).toEqual({ category: 'arch', project: expect.any(String) });
      // tag and type filters too
      expect(k.search('cache', { tag: 'cache', limit: 100 }).results.every((r) => r.tags.includes('cache'))).toBe(true);
      expect(k.search('cache', { type: 'spec' }).count).toBe(0);
    } finally {
      k.close();
    }
  });
});

describe('balanced selection', () => {
  it('caps a family (parent document) at one in balanced mode and two with diversity off', () => {
    const { dir, root } = tempRoot();
    writeFiller(root, 30);
    for (let i = 0; i < 5; i++) appendSpecEntry(root, { category: 'debug', title: `Retry rule ${i}`, content: 'retry retry with backoff', keywords: ['retry'] });
    for (let i = 0; i < 3; i++) writeKnowhowFile(root, `TIP-20260801-retry-${i}`, { title: `Note ${i}` }, 'mentions retry once among other words here');
    const k = open(dir);
    try {
      const fam = (rs: Array<{ family: string }>) => rs.filter((r) => r.family === 'spec:project:debug-notes').length;
      const balanced = k.search('retry', { limit: 4, decay: false });
      expect(balanced.results[0]!.family).toBe('spec:project:debug-notes');
      expect(fam(balanced.results)).toBe(1);
      expect(balanced.count).toBe(4);
      const off = k.search('retry', { limit: 4, diversity: 'off', decay: false });
      expect(fam(off.results)).toBe(2);
      // The cap orders, it never empties the page: with limit 8 the family's other entries come after every other family.
      const page = k.search('retry', { limit: 8, decay: false }).results.map((r) => r.family === 'spec:project:debug-notes');
      expect(page).toEqual([true, false, false, false, true, true, true, true]);
    } finally {
      k.close();
    }
  });

  it('uses MMR to pass over a near-duplicate in favour of a relevant, different result', () => {
    const { dir, root } = tempRoot();
    writeFiller(root, 30);
    writeKnowhowFile(root, 'TIP-20260801-a1', { title: 'Upload retry policy', tags: ['upload', 'retry', 'policy'] }, 'upload retry policy backoff jitter');
    writeKnowhowFile(root, 'TIP-20260801-a2', { title: 'Upload retry policy', tags: ['upload', 'retry', 'policy'] }, 'upload retry policy backoff jitter.');
    writeKnowhowFile(root, 'TIP-20260801-b', { title: 'Upload retry budget', tags: ['upload', 'retry', 'budget'] }, 'upload retry budget per minute and per hour');
    const k = open(dir);
    try {
      const off = k.search('upload retry', { limit: 2, diversity: 'off', decay: false });
      expect(off.results.map((r) => r.id)).toEqual(['knowhow-tip-20260801-a1', 'knowhow-tip-20260801-a2']);
      const mmr = k.search('upload retry', { limit: 2, decay: false });
      expect(mmr.results.map((r) => [r.id, r.selectionReason])).toEqual([
        ['knowhow-tip-20260801-a1', 'relevance'],
        ['knowhow-tip-20260801-b', 'diversity'],
      ]);
    } finally {
      k.close();
    }
  });

  it('gives at most one exploration slot, never first, seeded by query, corpus and period, never by use', () => {
    const { dir, root } = tempRoot();
    writeFiller(root, 40);
    for (let i = 0; i < 8; i++) writeKnowhowFile(root, `TIP-20260801-deploy-${i}`, { title: `Deploy step ${i}`, tags: ['deploy'] }, `deploy ${'deploy '.repeat(8 - i)} notes ${i}`);
    const now = Date.UTC(2026, 11, 1);
    const k = open(dir);
    try {
      const first = k.search('deploy', { limit: 4, decay: false, now });
      expect(first.exploration).toBe('on');
      const explored = first.results.filter((r) => r.selectionReason === 'exploration');
      expect(explored).toHaveLength(1);
      expect(first.results[3]!.selectionReason).toBe('exploration');
      const plain = k.search('deploy', { limit: 4, diversity: 'off', decay: false, readOnlyProbe: true }).results.map((r) => r.id);
      expect(plain.slice(0, 3)).toEqual(first.results.slice(0, 3).map((r) => r.id));
      expect(plain).not.toContain(explored[0]!.id);
      // Use changes nothing: many searches later, the same page, probe or not.
      for (let i = 0; i < 5; i++) k.search('deploy', { limit: 4, decay: false, now });
      expect(k.search('deploy', { limit: 4, decay: false, now, readOnlyProbe: true }).results).toEqual(first.results);
      // Broken counts change nothing either: they are never read.
      const db = new Database(join(root.workflowDir, INDEX_FILE));
      try {
        db.exec("UPDATE exposure SET hits = 'lots'");
        expect(k.search('deploy', { limit: 4, decay: false, now }).results).toEqual(first.results);
      } finally {
        db.close();
      }
      // The slot rotates with the period: over a year of weeks it visits more than one entry.
      const week = 7 * 86_400_000;
      const slots = new Set(Array.from({ length: 52 }, (_, w) => k.search('deploy', { limit: 4, decay: false, now: now + w * week, readOnlyProbe: true }).results[3]!.id));
      expect(slots.size).toBeGreaterThan(1);
    } finally {
      k.close();
    }
  });
});

describe('deprecated entries', () => {
  it('are hidden from search and the injection keyword index unless asked for', () => {
    const { dir, root } = tempRoot();
    writeFiller(root, 10);
    const old = appendSpecEntry(root, { category: 'coding', title: 'Tabs for indentation', content: 'indent with tabs', keywords: ['indent'], sid: 'S-OLD' });
    appendSpecEntry(root, { category: 'coding', title: 'Spaces for indentation', content: 'indent with two spaces', keywords: ['indent'], sid: 'S-NEW' });
    const dep = appendSpecEntry(root, { category: 'learning', title: 'Indent YAML with spaces', content: 'yaml indent', keywords: ['indent'], sid: 'S-DEP' });
    const k = open(dir);
    try {
      supersedeSpec(root, 'S-OLD', 'S-NEW');
      deprecateSpec(root, 'S-DEP');
      expect(k.search('indent').results.map((r) => r.id)).toEqual(['spec:project:coding-conventions-002']);
      const all = k.search('indent', { includeDeprecated: true, limit: 10, diversity: 'off' });
      expect(all.results.map((r) => [r.id, r.status]).sort()).toEqual([
        [old.id, 'deprecated'],
        ['spec:project:coding-conventions-002', 'active'],
        [dep.id, 'deprecated'],
      ]);
      expect(k.keywordIndex().match('how should I indent this file?').map((h) => h.id)).toEqual(['spec:project:coding-conventions-002']);
    } finally {
      k.close();
    }
  });
});

describe('queries of any length and alphabet', () => {
  it('never throw and never reach the index as query syntax', () => {
    const { dir, root } = tempRoot();
    writeFiller(root, 5);
    writeKnowhowFile(root, 'TIP-20260801-ops', { title: 'OR AND NOT NEAR operators' }, 'quoting "double" and *stars*');
    const k = open(dir);
    try {
      for (const q of ['"unbalanced', 'a OR b AND NOT c', 'NEAR(a b, 2)', 'title:ops', "'; DROP TABLE entries; --", '(.*)+[', '^$\\d{2}', '😀🚀', '数据库索引', 'x'.repeat(4000), '-', '***', 'col:*']) {
        expect(() => k.search(q)).not.toThrow();
      }
      expect(k.search('NOT').results[0]?.id).toBe('knowhow-tip-20260801-ops');
      fc.assert(
        fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (q) => {
          const r = k.search(q, { readOnlyProbe: true });
          return r.count >= 0;
        }),
        { numRuns: 300 },
      );
      expect(k.search('entries').count).toBeGreaterThanOrEqual(0);
    } finally {
      k.close();
    }
  });
});

describe('incremental index and read-only probe', () => {
  it('picks up changed, added and removed files; rebuild gives the same answer', () => {
    const { dir, root } = tempRoot();
    writeFiller(root, 10);
    const path = join(root.workflowDir, 'knowhow', 'TIP-20260801-moving.md');
    writeKnowhowFile(root, 'TIP-20260801-moving', { title: 'Kubernetes probes' }, 'liveness probes');
    const k = open(dir);
    try {
      expect(k.search('kubernetes').count).toBe(1);
      writeKnowhowFile(root, 'TIP-20260801-moving', { title: 'Docker healthchecks' }, 'healthcheck interval and more text');
      expect(k.search('kubernetes').count).toBe(0);
      expect(k.search('docker').count).toBe(1);
      const before = k.search('docker healthcheck', { readOnlyProbe: true });
      expect(k.rebuild().entries).toBe(11);
      expect(k.search('docker healthcheck', { readOnlyProbe: true }).results).toEqual(before.results);
      rmSync(path);
      expect(k.search('docker').count).toBe(0);
    } finally {
      k.close();
    }
  });

  it('a read-only probe writes nothing: no index file, no exposure', () => {
    const { dir, root } = tempRoot();
    writeFiller(root, 10);
    writeKnowhowFile(root, 'TIP-20260801-probe', { title: 'Probe target' }, 'probe');
    const ro = open(dir, { readOnly: true });
    try {
      expect(ro.search('probe').count).toBe(1);
      expect(ro.indexLocation).toBe(':memory:');
    } finally {
      ro.close();
    }
    expect(existsSync(join(root.workflowDir, INDEX_FILE))).toBe(false);
    const k = open(dir);
    k.search('filler', { readOnlyProbe: true });
    k.close();
    const db = new Database(join(root.workflowDir, INDEX_FILE), { readonly: true });
    try {
      expect(db.prepare('SELECT max(hits) FROM exposure').pluck().get()).toBe(0);
    } finally {
      db.close();
    }
    const ro2 = open(dir, { readOnly: true });
    try {
      expect(ro2.indexLocation).toBe(join(root.workflowDir, INDEX_FILE));
      ro2.search('filler');
    } finally {
      ro2.close();
    }
    const db2 = new Database(join(root.workflowDir, INDEX_FILE), { readonly: true });
    try {
      expect(db2.prepare('SELECT max(hits) FROM exposure').pluck().get()).toBe(0);
    } finally {
      db2.close();
    }
  });
});

describe('workflow-root isolation', () => {
  it('confines reads, writes and the index to the given root', () => {
    const a = tempRoot();
    const b = tempRoot();
    appendSpecEntry(a.root, { category: 'coding', title: 'Alpha only rule', content: 'shared word zebra', keywords: ['zebra'] });
    appendSpecEntry(b.root, { category: 'coding', title: 'Bravo only rule', content: 'shared word zebra', keywords: ['zebra'] });
    // A global spec in this MAESTRO_HOME: left out when a root is given.
    const home = join(a.dir, '.home');
    mkdirSync(join(home, 'specs'), { recursive: true });
    writeFileSync(join(home, 'specs', 'learnings.md'), '<spec-entry category="learning" keywords="zebra" date="2026-01-01" title="Global zebra">\nzebra\n</spec-entry>\n');
    const k = openKnowledge({ workflowRoot: a.dir, env: { ...process.env, MAESTRO_HOME: home } });
    try {
      expect(k.search('zebra').results.map((r) => r.name)).toEqual(['Alpha only rule']);
    } finally {
      k.close();
    }
    expect(existsSync(join(b.root.workflowDir, INDEX_FILE))).toBe(false);
    const g = openKnowledge({ workflowRoot: a.dir, includeGlobal: true, env: { ...process.env, MAESTRO_HOME: home } });
    try {
      expect(g.search('zebra').results.map((r) => r.id).sort()).toEqual(['spec:global:learnings-001', 'spec:project:coding-conventions-001']);
    } finally {
      g.close();
    }
    expect(() => appendSpecEntry(a.root, { category: 'coding', title: 'x', content: 'y', keywords: ['z'], scope: 'global' })).toThrow(/confines writes/);
  });
});

describe('load and identity', () => {
  it('accepts every alias, refuses unknown ids with the nearest ones, and refuses deprecated entries unless asked', async () => {
    const { dir, root } = tempRoot('mf-workflow');
    const k = open(dir);
    try {
      for (const alias of ['spec:project:coding-conventions-001', 'S-20260611-k3x9', 'spec:S-20260611-k3x9', 'coding-conventions.md:17'])
        expect((await k.load(alias)).id).toBe('spec:project:coding-conventions-001');
      for (const alias of ['knowhow-rcp-20260812-install-cli', 'knowhow:rcp-20260812-install-cli', 'knowhow:knowhow-rcp-20260812-install-cli', 'rcp-20260812-install-cli', 'RCP-20260812-install-cli', 'knowhow/RCP-20260812-install-cli.md'])
        expect((await k.load(alias)).id).toBe('knowhow-rcp-20260812-install-cli');
      await expect(k.load('spec:project:coding-convention-001')).rejects.toThrow(/Unknown knowledge id .* Nearest known ids: spec:project:coding-conventions-001/);
      await expect(k.load('knowhow-rcp-20260716-pi-maestro-flow-cli')).rejects.toThrow(/deprecated \(superseded by knowhow-rcp-20260812-install-cli\)/);
      expect((await k.load('knowhow-rcp-20260716-pi-maestro-flow-cli', { includeDeprecated: true })).id).toBe('knowhow-rcp-20260716-pi-maestro-flow-cli');
      expect(root.confined).toBe(true);
    } finally {
      k.close();
    }
  });
});

describe('a one-shot process and the run ledgers', () => {
  it('a search leaves them (no ranking reads them); a graph call reads them, as fresh as the files', () => {
    const { dir, root } = tempRoot();
    const id = writeKnowhowFile(root, 'TIP-20260801-quokka', { title: 'Quokka wrangling' }, 'Quokkas need patience.');
    const run = join(root.workflowDir, 'sessions', 'task-t1', 'runs', 'run-1');
    mkdirSync(run, { recursive: true });
    writeFileSync(join(run, 'knowledge-delta.json'), JSON.stringify({ session_id: 'task-t1', run_id: 'run-1', inputs: [{ knowledge_id: id, signal: 'consumed' }] }));
    const ledgerRows = () => {
      const db = new Database(join(root.workflowDir, INDEX_FILE), { readonly: true });
      try {
        return db.prepare("SELECT count(*) FROM files WHERE source = 'ledger'").pluck().get() as number;
      } finally {
        db.close();
      }
    };
    const k = open(dir);
    try {
      expect(k.search('quokka', { readOnlyProbe: true }).count).toBe(1);
      expect(k.list({ type: 'knowhow' })).toHaveLength(1);
      expect(ledgerRows()).toBe(0);
      expect(k.neighbors(id).filter((n) => n.rel === 'consumed-by').map((n) => n.id).sort()).toEqual(['run:run-1', 'task:task-t1']);
      expect(ledgerRows()).toBe(1);
    } finally {
      k.close();
    }
  });
});
