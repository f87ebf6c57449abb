/**
 * `maestro wiki migrate`: from the older layouts to the current one.
 *   - `knowledge-base/{contexts,entities,summaries}` → `wiki/knowledge/…`
 *     (a file that already exists at the destination, or that another item of
 *     the same run goes to, is left where it is and reported; nothing is
 *     overwritten: migrateMoves.ts);
 *   - engineering-era `errors/ snippets/ decisions/` folders and `E###`/`D###`
 *     files → `wiki/knowledge/.trash/<stamp>/` (the notes delete them; we keep
 *     them recoverable), a source's folders under its own path there
 *     (`knowledge-base/errors`, `wiki/knowledge-base/errors`). `S###` summaries are kept: the notes' pattern
 *     `^[ESD]\d{3}-` would have hit them by mistake;
 *   - what GUI-Anything's own migration moves (scripts/wiki/migrate-wiki-layout.sh):
 *     `runtime/*.json` → `sessions/`, `evidence/<id>.json` →
 *     `sessions/<id>-evidence.json`, `daily-notes/*` → `notes/` (an existing
 *     destination is left alone and reported, as there);
 *   - per-session caches `<id>.json` (the SessionFlowRecord), `<id>-summaries.json`,
 *     `<id>-intent-buckets.json`, `<id>-evidence.json`, `<id>-graph.json` → merged
 *     into `sessions/<id>/bundle.json`, originals moved to `sessions/.migrated/`.
 *     The bundle is complete as GUI-Anything writes one: a flowGraph (empty when
 *     no cache had one), every summary with source, status and savedAt.
 *     A bundle already there that cannot be used (unreadable, another schema,
 *     another workspace) is never overwritten: its caches stay, reported.
 * The whole plan is made before anything moves. `dryRun` reports the same plan
 * and changes nothing.
 */
import { existsSync, readdirSync, rmdirSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, sep } from 'node:path';
import { jsonSyntaxWhere } from '../../lib/jsonError.js';
import { readRegularFile } from '../../lib/regularFile.js';
import { loadBundle, writeBundle } from '../bundle/store.js';
import { createEmptyBundle, type SessionBundle, type SummaryItem } from '../bundle/types.js';
import { LEGACY_DIRS, TYPE_DIR, wikiLayout } from '../../knowledge/format/wiki/layout.js';
import { moveError, moveNoClobber, MovePlan, type MigrationPlanItem } from './migrateMoves.js';

export type { MigrationPlanItem };

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

const SESSION_CACHE = /^(.+?)-(summaries|intent-buckets|evidence|graph)\.json$/;
/** `<sessionId>.json`: GUI-Anything's SessionFlowRecord. `_index.json` and dot files are not session caches. */
const FLOW_RECORD = /^([A-Za-z0-9][A-Za-z0-9._-]*)\.json$/;

function cacheOf(name: string): { id: string; kind: string } | null {
  const m = SESSION_CACHE.exec(name);
  if (m) return { id: m[1]!, kind: m[2]! };
  const f = FLOW_RECORD.exec(name);
  return f && !name.startsWith('_') ? { id: f[1]!, kind: 'flow' } : null;
}

/** GUI-Anything's moves: runtime/*.json → sessions/, evidence/<id>.json → sessions/<id>-evidence.json, daily-notes/* → notes/. */
function planGuiAnythingMoves(wikiRoot: string, plan: MovePlan): void {
  const layout = wikiLayout(wikiRoot);
  const files = (dir: string, ext?: string) => (existsSync(dir) ? readdirSync(dir).filter((n) => (!ext || n.endsWith(ext)) && statSync(join(dir, n)).isFile()) : []);
  for (const name of files(join(wikiRoot, 'runtime'), '.json')) plan.add('move', join(wikiRoot, 'runtime', name), join(layout.sessions, name));
  for (const name of files(join(wikiRoot, 'evidence'), '.json')) plan.add('move', join(wikiRoot, 'evidence', name), join(layout.sessions, `${name.slice(0, -'.json'.length)}-evidence.json`));
  const notes = join(wikiRoot, 'daily-notes');
  if (existsSync(notes)) for (const name of readdirSync(notes)) plan.add('move', join(notes, name), join(layout.notes, name));
}

/** After the moves: legacy folders left empty go (bottom up), as GUI-Anything's rmdir does; anything still holding a file stays. */
function removeEmptyLegacyDirs(dirs: readonly string[]): void {
  const prune = (dir: string): void => {
    if (!existsSync(dir) || !statSync(dir).isDirectory()) return;
    for (const d of readdirSync(dir, { withFileTypes: true })) if (d.isDirectory()) prune(join(dir, d.name));
    try {
      rmdirSync(dir);
    } catch {
      // not empty (a conflict stayed)
    }
  };
  for (const dir of dirs) prune(dir);
}

/**
 * Where a source's engineering-era folders go in the trash: its path from the wiki's parent
 * (`knowledge-base/errors`, `wiki/knowledge-base/errors`), so that the two default sources, which
 * both may have `errors/`, never share one destination.
 */
function trashLabel(wikiRoot: string, base: string): string {
  const parts = relative(dirname(wikiRoot), base).split(sep).filter((p) => p && p !== '.' && p !== '..');
  return parts.length ? join(...parts) : 'knowledge-base';
}

/** Everything the migration will do, decided before anything moves: a move whose destination is taken is a conflict. */
function planMigration(wikiRoot: string, sources: readonly string[], now: Date): MigrationPlanItem[] {
  const layout = wikiLayout(wikiRoot);
  const plan = new MovePlan([]);
  const trash = join(layout.knowledge, '.trash', now.toISOString().replace(/[:.]/g, '-'));
  for (const base of sources.filter((s) => existsSync(s))) {
    for (const type of Object.values(TYPE_DIR)) {
      for (const file of walkFiles(join(base, type))) plan.add('move', file, join(layout.knowledge, type, relative(join(base, type), file)));
    }
    for (const dir of LEGACY_DIRS) if (existsSync(join(base, dir))) plan.add('trash', join(base, dir), join(trash, trashLabel(wikiRoot, base), dir));
  }
  for (const dir of LEGACY_DIRS) if (existsSync(join(layout.knowledge, dir))) plan.add('trash', join(layout.knowledge, dir), join(trash, dir));
  for (const type of ['contexts', 'entities'] as const) {
    for (const file of walkFiles(join(layout.knowledge, type))) {
      if (/^[ED]\d{3}-.+\.md$/i.test(file.split('/').pop() ?? '')) plan.add('trash', file, join(trash, relative(layout.knowledge, file)));
    }
  }
  planGuiAnythingMoves(wikiRoot, plan);
  // Session caches already in sessions/, and those the moves above bring there. Each merged one goes to
  // sessions/.migrated/, which an earlier migration may have filled: then it is not merged, and stays.
  const cacheFiles = new Map<string, string>();
  if (existsSync(layout.sessions)) for (const name of readdirSync(layout.sessions)) if (statSync(join(layout.sessions, name)).isFile()) cacheFiles.set(name, join(layout.sessions, name));
  for (const i of plan.items) if (i.action === 'move' && dirname(i.to!) === layout.sessions) cacheFiles.set(basename(i.to!), i.to!);
  for (const [name, path] of cacheFiles) {
    const cache = cacheOf(name);
    if (!cache) continue;
    const taken = plan.takenBy(path, migratedPath(layout.sessions, path));
    if (taken) plan.items.push({ action: 'conflict', from: path, to: migratedPath(layout.sessions, path), note: `${cache.kind}: ${taken.replace(/; left in place$/, '')}; cache not merged, left in place` });
    else {
      plan.claim(path, migratedPath(layout.sessions, path));
      plan.items.push({ action: 'merge', from: path, to: join(layout.sessions, cache.id, 'bundle.json'), note: cache.kind });
    }
  }
  return plan.items;
}

/** Where a merged cache's original is kept. */
function migratedPath(sessions: string, cache: string): string {
  return join(sessions, '.migrated', basename(cache));
}

export function migrateWikiLayout(wikiRoot: string, opts: { workspaceRoot: string; from?: string; dryRun?: boolean; now: Date }): MigrationResult {
  const layout = wikiLayout(wikiRoot);
  const sources = opts.from ? [opts.from] : [join(wikiRoot, 'knowledge-base'), join(dirname(wikiRoot), 'knowledge-base')];
  const items = planMigration(wikiRoot, sources, opts.now);
  if (opts.dryRun) return { dryRun: true, items };

  const progress = { done: 0, total: items.filter((i) => i.action === 'move' || i.action === 'trash' || i.action === 'merge').length };
  const move = (from: string, to: string) => {
    try {
      moveNoClobber(from, to);
    } catch (err) {
      throw moveError(err, from, to, progress);
    }
    progress.done++;
  };
  for (const item of items) if (item.action === 'move' || item.action === 'trash') move(item.from, item.to!);
  removeEmptyLegacyDirs([...['runtime', 'evidence', 'daily-notes'].map((d) => join(wikiRoot, d)), ...sources]);
  const bySession = new Map<string, MigrationPlanItem[]>();
  for (const m of items.filter((i) => i.action === 'merge')) {
    const id = cacheOf(basename(m.from))!.id;
    bySession.set(id, [...(bySession.get(id) ?? []), m]);
  }
  for (const [id, parts] of bySession) {
    const existing = loadBundle(layout, id, { workspaceRoot: opts.workspaceRoot });
    if (!existing.bundle && existing.reason !== 'bundle_not_found') {
      // Something is there that this code does not understand or does not own: it stays as it is.
      for (const part of parts) Object.assign(part, { action: 'conflict', note: `${part.note}: ${existing.detail ?? existing.reason}; bundle left as it is, cache not merged` });
      continue;
    }
    const bundle: SessionBundle = existing.bundle ?? createEmptyBundle({ sessionId: id, workspaceRoot: opts.workspaceRoot, jsonlPath: '', jsonlMtime: 0 }, opts.now.getTime());
    for (const part of parts) {
      const data = readLegacyJson(part.from);
      if ('problem' in data) {
        part.action = 'conflict';
        part.note = `${data.problem}, left in place`;
        continue;
      }
      if (part.note === 'flow' && !(isObject(data.json) && (data.json.sessionId === id || isObject(data.json.flowGraph)))) {
        part.action = 'conflict';
        part.note = 'not a session flow record (no sessionId or flowGraph); left in place';
        continue;
      }
      mergeLegacy(bundle, part.note!, data.json);
      move(part.from, migratedPath(layout.sessions, part.from));
    }
    completeBundle(bundle, opts.now.getTime());
    writeBundle(layout, bundle);
  }
  return { dryRun: false, items };
}

/** What GUI-Anything's own bundles always have: a flowGraph, and summaries with source, status and savedAt. */
function completeBundle(bundle: SessionBundle, now: number): void {
  bundle.session.flow.flowGraph ??= { nodes: [], edges: [], updatedAt: now };
  for (const e of Object.values(bundle.explorations)) {
    const s = e.summary as (SummaryItem & { savedAt?: unknown }) | undefined;
    if (!s) continue;
    e.summary = {
      ...s,
      explorationId: e.explorationId,
      source: s.source === 'ai' ? 'ai' : 'fallback',
      status: s.status === 'failed' ? 'failed' : 'ready',
      savedAt: typeof s.savedAt === 'number' && Number.isFinite(s.savedAt) ? s.savedAt : typeof s.savedAt === 'string' && Number.isFinite(Date.parse(s.savedAt)) ? Date.parse(s.savedAt) : now,
    };
  }
}

/**
 * A legacy cache file's JSON, or what is wrong with it. One that does not parse is named with the place only:
 * JSON.parse's message quotes the start of the file, and the note is printed and answered as JSON (a cache file
 * that is a link to a key would show its first characters).
 */
function readLegacyJson(file: string): { json: unknown } | { problem: string } {
  let text: string;
  try {
    text = readRegularFile(file);
  } catch (err) {
    return { problem: `unreadable (${(err as Error).message})` };
  }
  try {
    return { json: JSON.parse(text) };
  } catch {
    return { problem: `not valid JSON (${jsonSyntaxWhere(text)})` };
  }
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
  } else if (kind === 'evidence' && Array.isArray(inner)) {
    // evidence/<id>.json from older writers: a list of entries that name their exploration.
    for (const ev of inner) {
      const expId = isObject(ev) ? (typeof ev.explorationId === 'string' ? ev.explorationId : isObject(ev.source) && typeof ev.source.exploration_id === 'string' ? ev.source.exploration_id : '') : '';
      if (expId) bundle.curation.evidence[expId] ??= { ...(ev as object), explorationId: expId } as SessionBundle['curation']['evidence'][string];
    }
  } else if (kind === 'evidence' && isObject(inner)) {
    for (const [expId, ev] of Object.entries(inner)) bundle.curation.evidence[expId] ??= { ...(ev as object), explorationId: expId } as SessionBundle['curation']['evidence'][string];
  } else if (kind === 'graph' && isObject(data)) {
    // GraphCacheRecord {snapshot}, or a bare graph.
    const graph = data.snapshot ?? data.flowGraph ?? data;
    if (!bundle.session.flow.flowGraph && isObject(graph) && Array.isArray(graph.nodes)) bundle.session.flow.flowGraph = graph as unknown as SessionBundle['session']['flow']['flowGraph'];
  } else if (kind === 'flow' && isObject(data)) {
    // SessionFlowRecord (version 2): the session's flow state, the canonical one where both exist.
    const flow = bundle.session.flow;
    if (isObject(data.flowGraph) && Array.isArray(data.flowGraph.nodes)) flow.flowGraph = data.flowGraph as unknown as SessionBundle['session']['flow']['flowGraph'];
    if (isObject(data.flowchartHints)) flow.flowchartHints = { ...(data.flowchartHints as SessionBundle['session']['flow']['flowchartHints']), ...flow.flowchartHints };
    if (typeof data.fingerprint === 'string' && !flow.fingerprint) flow.fingerprint = data.fingerprint;
    if (typeof data.revision === 'number' && data.revision > flow.revision) flow.revision = data.revision;
    if (typeof data.jsonlMtime === 'number' && !bundle.meta.jsonlMtime) bundle.meta.jsonlMtime = data.jsonlMtime;
  }
}
