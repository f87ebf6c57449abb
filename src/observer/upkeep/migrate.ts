/**
 * `maestro wiki migrate`: from the older layouts to the current one.
 *   - `knowledge-base/{contexts,entities,summaries}` → `wiki/knowledge/…`
 *     (a file that already exists at the destination is left where it is and
 *     reported; nothing is overwritten);
 *   - engineering-era `errors/ snippets/ decisions/` folders and `E###`/`D###`
 *     files → `wiki/knowledge/.trash/<stamp>/` (the notes delete them; we keep
 *     them recoverable). `S###` summaries are kept: the notes' pattern
 *     `^[ESD]\d{3}-` would have hit them by mistake;
 *   - per-session caches `<id>-summaries.json`, `<id>-intent-buckets.json`,
 *     `<id>-evidence.json`, `<id>-graph.json` → merged into
 *     `sessions/<id>/bundle.json`, originals moved to `sessions/.migrated/`.
 * `dryRun` reports the same plan and changes nothing.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { loadBundle, writeBundle } from '../bundle/store.js';
import { createEmptyBundle, type SessionBundle, type SummaryItem } from '../bundle/types.js';
import { LEGACY_DIRS, TYPE_DIR, wikiLayout } from '../wiki/layout.js';

export interface MigrationPlanItem {
  action: 'move' | 'trash' | 'merge' | 'conflict';
  from: string;
  to?: string;
  note?: string;
}

export interface MigrationResult {
  dryRun: boolean;
  items: MigrationPlanItem[];
}

function walkFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, d.name);
    if (d.isDirectory()) out.push(...walkFiles(p));
    else if (d.isFile()) out.push(p);
  }
  return out;
}

function move(from: string, to: string): void {
  mkdirSync(dirname(to), { recursive: true });
  renameSync(from, to);
}

const SESSION_CACHE = /^(.+?)-(summaries|intent-buckets|evidence|graph)\.json$/;

export function migrateWikiLayout(wikiRoot: string, opts: { workspaceRoot: string; from?: string; dryRun?: boolean; now: Date }): MigrationResult {
  const layout = wikiLayout(wikiRoot);
  const items: MigrationPlanItem[] = [];
  const stamp = opts.now.toISOString().replace(/[:.]/g, '-');
  const trash = join(layout.knowledge, '.trash', stamp);
  const sources = opts.from ? [opts.from] : [join(wikiRoot, 'knowledge-base'), join(dirname(wikiRoot), 'knowledge-base')];

  for (const base of sources.filter((s) => existsSync(s))) {
    for (const type of Object.values(TYPE_DIR)) {
      for (const file of walkFiles(join(base, type))) {
        const to = join(layout.knowledge, type, relative(join(base, type), file));
        items.push(existsSync(to) ? { action: 'conflict', from: file, to, note: 'destination exists; left in place' } : { action: 'move', from: file, to });
      }
    }
    for (const dir of LEGACY_DIRS) if (existsSync(join(base, dir))) items.push({ action: 'trash', from: join(base, dir), to: join(trash, 'knowledge-base', dir) });
  }
  for (const dir of LEGACY_DIRS) if (existsSync(join(layout.knowledge, dir))) items.push({ action: 'trash', from: join(layout.knowledge, dir), to: join(trash, dir) });
  for (const type of ['contexts', 'entities'] as const) {
    for (const file of walkFiles(join(layout.knowledge, type))) {
      if (/^[ED]\d{3}-.+\.md$/i.test(file.split('/').pop() ?? '')) items.push({ action: 'trash', from: file, to: join(trash, relative(layout.knowledge, file)) });
    }
  }
  if (existsSync(layout.sessions)) {
    for (const name of readdirSync(layout.sessions)) {
      const m = SESSION_CACHE.exec(name);
      if (m && statSync(join(layout.sessions, name)).isFile()) items.push({ action: 'merge', from: join(layout.sessions, name), to: join(layout.sessions, m[1]!, 'bundle.json'), note: m[2] });
    }
  }
  if (opts.dryRun) return { dryRun: true, items };

  for (const item of items) {
    if (item.action === 'move' || item.action === 'trash') move(item.from, item.to!);
  }
  const merges = items.filter((i) => i.action === 'merge');
  const bySession = new Map<string, MigrationPlanItem[]>();
  for (const m of merges) {
    const id = SESSION_CACHE.exec(m.from.split('/').pop()!)![1]!;
    bySession.set(id, [...(bySession.get(id) ?? []), m]);
  }
  for (const [id, parts] of bySession) {
    const bundle: SessionBundle = loadBundle(layout, id, { workspaceRoot: opts.workspaceRoot }).bundle ?? createEmptyBundle({ sessionId: id, workspaceRoot: opts.workspaceRoot, jsonlPath: '', jsonlMtime: 0 }, opts.now.getTime());
    for (const part of parts) {
      let data: unknown;
      try {
        data = JSON.parse(readFileSync(part.from, 'utf8'));
      } catch (err) {
        part.action = 'conflict';
        part.note = `unreadable JSON, left in place: ${(err as Error).message}`;
        continue;
      }
      mergeLegacy(bundle, part.note!, data);
      move(part.from, join(layout.sessions, '.migrated', part.from.split('/').pop()!));
    }
    writeBundle(layout, bundle);
  }
  return { dryRun: false, items };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Merges one legacy cache into the bundle; what the bundle already has wins. */
function mergeLegacy(bundle: SessionBundle, kind: string, data: unknown): void {
  // Older writers stored either the map itself or `{ summaries: {...} }` / `{ evidence: {...} }`.
  const inner = isObject(data) && isObject(data[kind]) ? data[kind] : data;
  if (kind === 'summaries' && isObject(inner)) {
    for (const [expId, item] of Object.entries(inner)) {
      if (!isObject(item) || typeof item.text !== 'string') continue;
      const e = (bundle.explorations[expId] ??= { explorationId: expId, question: '' });
      e.summary ??= { ...(item as unknown as SummaryItem), explorationId: expId };
    }
  } else if (kind === 'intent-buckets' && isObject(data)) {
    if (isObject(data.buckets)) for (const [k, b] of Object.entries(data.buckets)) bundle.curation.buckets[k] ??= b as SessionBundle['curation']['buckets'][string];
    if (typeof data.openIntentKey === 'string' && !bundle.curation.openIntentKey) bundle.curation.openIntentKey = data.openIntentKey || null;
  } else if (kind === 'evidence' && isObject(inner)) {
    for (const [expId, ev] of Object.entries(inner)) bundle.curation.evidence[expId] ??= { ...(ev as object), explorationId: expId } as SessionBundle['curation']['evidence'][string];
  } else if (kind === 'graph' && isObject(data)) {
    if (!bundle.session.flow.flowGraph && isObject(data.flowGraph ?? data)) bundle.session.flow.flowGraph = (data.flowGraph ?? data) as SessionBundle['session']['flow']['flowGraph'];
  }
}
