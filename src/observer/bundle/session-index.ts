/**
 * SessionIndexService: `wiki/sessions/_index.json` (FORMATS §8.2), the
 * workspace's pointer to its sessions and the last one observed. An invalid
 * file or one from another workspace starts a fresh index (the bundles stay).
 *
 * Durability: the index is derived (seed 003: losing it only makes `-c` fall
 * back to scanning bundles / the newest transcript) and it is rewritten after
 * every bundle write, so it is written tmp + rename (atomic for readers) but
 * without the fsync the bundle gets: one fsync per persist instead of two,
 * which keeps the append → bundle latency down. After a power loss it may lag
 * the bundles or read as invalid, and then it starts fresh as above.
 */
import { readRegularFile } from '../../lib/regularFile.js';
import { writeFileAtomic, type WikiLayout } from '../../knowledge/format/wiki/layout.js';

export interface SessionIndex {
  schemaVersion: 1;
  workspaceRoot: string;
  lastSessionId: string | null;
  updatedAt: number;
  sessions: Record<string, { jsonlMtime: number; bundleUpdatedAt: number }>;
  /** Keys we do not know (GUI-Anything's, a person's): kept as they are when the index is rewritten. */
  [key: string]: unknown;
}

export function emptySessionIndex(workspaceRoot: string, now: number): SessionIndex {
  return { schemaVersion: 1, workspaceRoot, lastSessionId: null, updatedAt: now, sessions: {} };
}

export function readSessionIndex(layout: WikiLayout, workspaceRoot: string, now: number): { index: SessionIndex; fresh: boolean; reason?: string; foreignRoot?: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(readRegularFile(layout.sessionIndex));
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
    return { index: emptySessionIndex(workspaceRoot, now), fresh: true, reason: missing ? 'missing' : 'parse_error' };
  }
  const r = raw as Partial<SessionIndex> | null;
  if (!r || r.schemaVersion !== 1 || typeof r.workspaceRoot !== 'string' || !r.workspaceRoot) return { index: emptySessionIndex(workspaceRoot, now), fresh: true, reason: 'invalid' };
  // The caller decides: the observer reports a foreign wiki and writes nothing unless the person adopts it (FORMATS §8.2).
  if (r.workspaceRoot !== workspaceRoot) return { index: emptySessionIndex(workspaceRoot, now), fresh: true, reason: 'workspace_mismatch', foreignRoot: r.workspaceRoot };
  return {
    index: {
      ...r,
      schemaVersion: 1,
      workspaceRoot,
      lastSessionId: typeof r.lastSessionId === 'string' ? r.lastSessionId : null,
      updatedAt: typeof r.updatedAt === 'number' ? r.updatedAt : 0,
      sessions: r.sessions && typeof r.sessions === 'object' ? r.sessions : {},
    },
    fresh: false,
  };
}

export function recordSessionInIndex(layout: WikiLayout, workspaceRoot: string, sessionId: string, entry: { jsonlMtime: number; bundleUpdatedAt: number }, now: number): SessionIndex {
  const { index } = readSessionIndex(layout, workspaceRoot, now);
  // A session's keys we do not know stay too.
  const was = index.sessions[sessionId];
  index.sessions[sessionId] = { ...(was && typeof was === 'object' && !Array.isArray(was) ? was : {}), ...entry };
  index.lastSessionId = sessionId;
  index.updatedAt = now;
  writeFileAtomic(layout.sessionIndex, `${JSON.stringify(index, null, 2)}\n`, { root: layout.root, durable: false, private: true });
  return index;
}
