/**
 * The wiki's folders (FORMATS §8.1) and the one atomic write every wiki and
 * bundle file goes through: a temp file in the same folder, fsync, rename.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

export const ENTRY_TYPES = ['context', 'entity', 'summary'] as const;
export type EntryType = (typeof ENTRY_TYPES)[number];

export const TYPE_DIR: Record<EntryType, string> = { context: 'contexts', entity: 'entities', summary: 'summaries' };
export const TYPE_PREFIX: Record<EntryType, string> = { context: 'C', entity: 'N', summary: 'S' };
/** Engineering-era folders the layout no longer has (FORMATS §8.1). */
export const LEGACY_DIRS = ['errors', 'snippets', 'decisions'] as const;

export interface WikiLayout {
  root: string;
  knowledge: string;
  sessions: string;
  notes: string;
  audit: string;
  auditResolved: string;
  log: string;
  index: string;
  sessionIndex: string;
}

export function wikiLayout(root: string): WikiLayout {
  const knowledge = join(root, 'knowledge');
  return {
    root,
    knowledge,
    sessions: join(root, 'sessions'),
    notes: join(root, 'notes'),
    audit: join(knowledge, 'audit'),
    auditResolved: join(knowledge, 'audit', 'resolved'),
    log: join(knowledge, 'log'),
    index: join(knowledge, 'index.md'),
    sessionIndex: join(root, 'sessions', '_index.json'),
  };
}

export function bundlePath(layout: WikiLayout, sessionId: string): string {
  return join(layout.sessions, sessionId, 'bundle.json');
}

/** Writes `.<name>.tmp.<pid>` next to the target, fsyncs it, renames it over the target. */
export function writeFileAtomic(path: string, content: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = join(dirname(path), `.${basename(path)}.tmp.${process.pid}`);
  const fd = openSync(tmp, 'w');
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}
