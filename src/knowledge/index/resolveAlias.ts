/**
 * The canonical id an id or alias names (FORMATS §2: ids are matched as
 * written, then lowercased); an exact id wins over an alias that equals it.
 * A sid is an alias of its entry, so a sid two entries carry names both:
 * `sidCarriers` finds them, for `load` to refuse the choice.
 */
import type Database from 'better-sqlite3';
import type { KnowledgeEntry } from '../format/entry.js';
import { entryById } from './readEntries.js';

export function resolveAlias(db: Database.Database, ref: string): string | null {
  const q = db.prepare('SELECT id FROM aliases WHERE alias = ? ORDER BY (alias = id) DESC, id LIMIT 1').pluck();
  return (q.get(ref) as string | undefined) ?? (q.get(ref.toLowerCase()) as string | undefined) ?? null;
}

/**
 * The spec entries that `ref` names as the sid of `entry` (the sid itself or `spec:<sid>`), in the
 * same corpus as `entry` (the root's own, or one linked workspace: what `spec health` groups by for
 * duplicate-sid), in file and line order. One entry when the sid is unique or `ref` is not a sid.
 */
export function sidCarriers(db: Database.Database, ref: string, entry: KnowledgeEntry): KnowledgeEntry[] {
  if (entry.kind !== 'spec' || !entry.sid) return [entry];
  const q = db.prepare('SELECT id FROM aliases WHERE alias = ?').pluck();
  const ids = q.all(ref) as string[];
  const named = ids.length ? ids : (q.all(ref.toLowerCase()) as string[]);
  const carriers = named
    .map((id) => entryById(db, id)?.entry)
    .filter((e): e is KnowledgeEntry => e !== undefined && e.kind === 'spec' && e.sid === entry.sid && (e.workspace ?? null) === (entry.workspace ?? null));
  return carriers.length > 1 ? carriers.sort((a, b) => a.file.localeCompare(b.file) || (a.line ?? 0) - (b.line ?? 0)) : [entry];
}
