/**
 * A wiki as GUI-Anything leaves it (its older layout, its bundle with a token
 * total, its audit file), taken through Maestro and back: read, migrate,
 * audit, write back, re-read. Every file is written by hand in the shapes
 * FORMATS §8 records from GUI-Anything's code.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir, TranscriptBuilder, type TempDir } from '../__fixtures__/transcript-builder.js';
import { loadBundle } from '../bundle/store.js';
import { buildSessionView } from '../view.js';
import { ObserverSession } from '../session.js';
import { listWikiEntries } from '../../knowledge/format/wiki/entries.js';
import { wikiLayout } from '../../knowledge/format/wiki/layout.js';
import { fileAudit, listAudits, resolveAudit } from './audit.js';
import { migrateWikiLayout } from './migrate.js';

let dir: TempDir;
let wiki: string;
beforeEach(() => {
  dir = tempDir();
  wiki = join(dir.path, 'wiki');
});
afterEach(() => dir.cleanup());

const NOW = new Date('2026-11-20T10:00:00.000Z');

function put(rel: string, text: string): string {
  const path = join(wiki, rel);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  return path;
}

/** GUI-Anything's own committed entry (scheme/knowledge/…/C001-project-analysis.md), in its older knowledge-base/ folder. */
const GA_ENTRY = `---
id: C001
slug: project-analysis
request: Analyse the checkout service
type: context
category: project
tags: [project-overview, shop]
source: session
version: 2
status: active
intent_key: project-analysis
created: 2026-06-24
updated: 2026-06-24
---

## 问题
Analyse the checkout service

## 摘要
Checkout calls the payment client with a 5 s timeout.

## 解决方案
First pass analysis.
`;

function gaBundle(sessionId: string, workspaceRoot: string, jsonlPath: string) {
  return {
    schemaVersion: 1,
    meta: { sessionId, workspaceRoot, jsonlPath, jsonlMtime: 1, updatedAt: 1 },
    session: { intent: null, flow: { revision: 1, fingerprint: '', flowGraph: { nodes: [], edges: [], updatedAt: 1 }, flowchartHints: {}, graphPatchLedger: [] } },
    curation: { openIntentKey: '', buckets: {}, evidence: {} },
    explorations: {
      exp_1: {
        explorationId: 'exp_1',
        question: 'Why does checkout time out?',
        meta: { status: 'complete', toolCount: 2, errorCount: 0, toolSummary: 'Grep×1 · Read×1', tokens: 1234, files: ['src/checkout.ts'], durationMs: 4000 },
        summary: { text: 'A 5 s timeout on the payment client.', source: 'ai', status: 'ready', savedAt: 2 },
        write: null,
      },
    },
  };
}

describe('a GUI-Anything wiki, round trip', () => {
  it('reads, migrates, audits, writes back and re-reads without losing or reshaping what GUI-Anything wrote', async () => {
    // 1. The older layout GUI-Anything's migrate script knows, plus its per-session caches.
    put('knowledge-base/contexts/project-analysis/C001-project-analysis.md', GA_ENTRY);
    put('knowledge-base/errors/E001-old.md', '---\nid: E001\n---\n');
    put('runtime/ga-1.json', JSON.stringify({ version: 2, sessionId: 'ga-1', jsonlMtime: 5, fingerprint: 'exp_1:complete', revision: 3, updatedAt: 5, flowGraph: { nodes: [{ id: 'ga-1:exp_1', explorationId: 'exp_1', intentKey: 'debug', label: 'Timeout', status: 'complete', startedAt: 1, summaryPreview: '', metaBadges: { tools: 1, errors: 0, wiki: 'none' } }], edges: [], updatedAt: 5 }, flowchartHints: {} }));
    put('runtime/ga-1-intent-buckets.json', JSON.stringify({ sessionId: 'ga-1', openIntentKey: 'debug', buckets: { debug: { intentKey: 'debug', nodeTitle: 'Timeout', explorationIds: ['exp_1'] } }, updatedAt: 5 }));
    put('runtime/ga-1-summaries.json', JSON.stringify({ exp_1: { text: 'The payment client times out after 5 s.', source: 'ai', status: 'ready' } }));
    put('evidence/ga-1.json', JSON.stringify({ exp_1: { schema_version: 1, saved_at: '2026-11-19T10:00:00.000Z', request: 'Why does checkout time out?', summary: 's', result: 'success', duration: 4000, tokens: 1234, commands: [], files: [], nodes: [] } }));
    put('daily-notes/2026-11-19.md', '---\ndate: "2026-11-19"\ntype: "note-daily"\n---\n\n# Notes 2026-11-19\n');
    put('sessions/not-a-cache.json', '{"hello": "world"}');

    const result = migrateWikiLayout(wiki, { workspaceRoot: dir.path, now: NOW });
    // Everything GUI-Anything's migration moves has moved; the legacy folders are gone.
    for (const gone of ['runtime', 'evidence', 'daily-notes', 'knowledge-base/contexts']) expect(existsSync(join(wiki, gone)), gone).toBe(false);
    expect(readFileSync(join(wiki, 'notes/2026-11-19.md'), 'utf8')).toContain('# Notes 2026-11-19');
    expect(readFileSync(join(wiki, 'knowledge/contexts/project-analysis/C001-project-analysis.md'), 'utf8')).toBe(GA_ENTRY);
    expect(readdirSync(join(wiki, 'sessions/.migrated')).sort()).toEqual(['ga-1-evidence.json', 'ga-1-intent-buckets.json', 'ga-1-summaries.json', 'ga-1.json']);
    // A JSON file that is not a session flow record is reported and left alone.
    expect(result.items.find((i) => i.from.endsWith('not-a-cache.json'))).toMatchObject({ action: 'conflict' });
    expect(readFileSync(join(wiki, 'sessions/not-a-cache.json'), 'utf8')).toBe('{"hello": "world"}');

    // 2. The migrated bundle is complete, as GUI-Anything writes one.
    const migrated = JSON.parse(readFileSync(join(wiki, 'sessions/ga-1/bundle.json'), 'utf8'));
    expect(migrated.session.flow.flowGraph.nodes).toHaveLength(1);
    expect(migrated.session.flow.revision).toBe(3);
    expect(migrated.explorations.exp_1.summary).toMatchObject({ text: 'The payment client times out after 5 s.', source: 'ai', status: 'ready', savedAt: NOW.getTime() });
    expect(migrated.curation.evidence.exp_1).toMatchObject({ schema_version: 1, tokens: 1234 });
    expect(migrated.curation.buckets.debug.explorationIds).toEqual(['exp_1']);

    // 3. Its entry reads (scalar source, inline tags, date-only times); an audit is filed and resolved as GUI-Anything does.
    const entry = listWikiEntries(wiki).entries.find((e) => e.id === 'C001')!;
    expect(entry).toMatchObject({ request: 'Analyse the checkout service', tags: ['project-overview', 'shop'] });
    put('knowledge/audit/2026-11-19T09-00-00-000Z-C001.md', '---\ntarget_id: "C001"\nseverity: high\nfiled_at: "2026-11-19T09:00:00.000Z"\nstatus: open\n---\n\n## Anchor\nTimeout is 15 s now.\n');
    const ours = fileAudit(wiki, { targetId: 'C001', severity: 'low', anchor: 'Also names the wrong client.' }, NOW);
    expect(listAudits(wiki).open.map((a) => [a.severity, a.anchor])).toEqual([
      ['high', 'Timeout is 15 s now.'],
      ['low', 'Also names the wrong client.'],
    ]);
    for (const file of [ours.file, '2026-11-19T09-00-00-000Z-C001.md']) {
      resolveAudit(wiki, file, 'fixed', NOW);
      const text = readFileSync(join(wikiLayout(wiki).auditResolved, file), 'utf8');
      expect(text.match(/^status: .*$/gm), file).toEqual(['status: resolved']);
      expect(text.match(/^resolved_at: /gm), file).toHaveLength(1);
    }

    // 4. A bundle GUI-Anything wrote (token total as a number) is shown with its tokens, not 0/0 …
    const jsonl = join(dir.path, 'ga-2.jsonl');
    new TranscriptBuilder(Date.parse('2026-11-20T09:00:00.000Z')).user('Why does checkout time out?').turn({ tools: [{ name: 'Grep', input: { pattern: 'timeout' } }], answer: 'A 5 s timeout.' }).writeTo(jsonl);
    put('sessions/ga-2/bundle.json', JSON.stringify(gaBundle('ga-2', dir.path, jsonl), null, 2));
    const load = loadBundle(wikiLayout(wiki), 'ga-2', { workspaceRoot: dir.path });
    const restored = buildSessionView({ bundle: load.bundle!, mode: 'restore', load: { status: load.status }, explorations: null, transcript: null });
    expect(restored.explorations[0]).toMatchObject({ tokens: 1234, tokenBreakdown: null, toolSummary: 'Grep×1 · Read×1', durationMs: 4000 });
    expect(restored.tokens.total).toBe(1234);

    // … and written back by a live session, it keeps GUI-Anything's shapes and its stored summary.
    const session = new ObserverSession({ sessionId: 'ga-2', jsonlPath: jsonl, wikiRoot: wiki, workspaceRoot: dir.path, projectSlug: 'shop', now: () => NOW.getTime() });
    session.readOnce();
    await session.step();
    const back = JSON.parse(readFileSync(join(wiki, 'sessions/ga-2/bundle.json'), 'utf8'));
    expect(back.explorations.exp_1.summary).toMatchObject({ text: 'A 5 s timeout on the payment client.', source: 'ai', savedAt: 2 });
    expect(typeof back.explorations.exp_1.meta.tokens).toBe('number');
    expect(back.explorations.exp_1.meta).toMatchObject({ tokens: 240, tokenBreakdown: { input: 200, output: 40, cacheRead: 0, cacheWrite: 0 }, toolSummary: 'Grep×1' });
    expect(back.session.flow.flowGraph.nodes.map((n: { id: string }) => n.id)).toEqual(['ga-2:exp_1']);

    // 5. Re-read: the same bundle, and a Maestro bundle written before the change (token object) reads as a total.
    expect(loadBundle(wikiLayout(wiki), 'ga-2', { workspaceRoot: dir.path }).bundle!.explorations.exp_1!.meta!.tokens).toBe(240);
    const old = gaBundle('old-1', dir.path, jsonl);
    (old.explorations.exp_1.meta as Record<string, unknown>).tokens = { input: 10, output: 20, cacheRead: 30, cacheWrite: 0 };
    (old.explorations.exp_1.meta as Record<string, unknown>).durationMs = -23_766_155_643;
    put('sessions/old-1/bundle.json', JSON.stringify(old));
    const oldMeta = loadBundle(wikiLayout(wiki), 'old-1', { workspaceRoot: dir.path }).bundle!.explorations.exp_1!.meta!;
    expect(oldMeta.tokens).toBe(60);
    expect(oldMeta.tokenBreakdown).toEqual({ input: 10, output: 20, cacheRead: 30, cacheWrite: 0 });
    expect(oldMeta).not.toHaveProperty('durationMs');
  });
});
