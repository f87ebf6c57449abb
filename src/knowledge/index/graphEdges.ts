/**
 * One step along the MaestroGraph's `edges` table (graph/graph.ts): the
 * edges leaving or reaching any of an entry's aliases, each with the
 * canonical id of the other end when that end resolves to an entry.
 */
import type Database from 'better-sqlite3';

/** Every alias of a canonical id (the id itself is one of them once indexed). */
export function aliasesOf(db: Database.Database, id: string): string[] {
  return db.prepare('SELECT alias FROM aliases WHERE id = ?').pluck().all(id) as string[];
}

export interface EdgeRow {
  rel: string;
  /** The other end as written in the file. */
  ref: string;
  /** Its canonical id, or null when it names no entry. */
  canonical: string | null;
}

/** Edges whose source (`out`) or destination (`in`) is one of `refs`, optionally of one relation. */
export function edgesAt(db: Database.Database, refs: string[], direction: 'out' | 'in', rel?: string): EdgeRow[] {
  const [here, there] = direction === 'out' ? ['src', 'dst'] : ['dst', 'src'];
  const ph = refs.map(() => '?').join(',');
  const relClause = rel ? ' AND ed.rel = ?' : '';
  return db
    .prepare(`SELECT ed.rel AS rel, ed.${there} AS ref, (SELECT a.id FROM aliases a WHERE a.alias = ed.${there} LIMIT 1) AS canonical FROM edges ed WHERE ed.${here} IN (${ph})${relClause}`)
    .all(...refs, ...(rel ? [rel] : [])) as EdgeRow[];
}
