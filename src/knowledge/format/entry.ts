/**
 * The unit every consumer sees: one knowledge entry with its three identities
 * (seed 000 §3.1): `id` (canonical, accepted by `maestro load --id`),
 * `graphId` (the MaestroGraph node) and `aliases[]` (older ids that still
 * resolve). Built only by the source readers in corpus.ts, never by callers
 * from paths or line numbers.
 */

export type EntryKind = 'spec' | 'knowhow' | 'wiki';

export interface KnowledgeEntry {
  id: string;
  graphId: string;
  aliases: string[];
  kind: EntryKind;
  /** project | global | team | personal | workspace | wiki */
  scope: string;
  /** Linked workspace name; null for the root's own knowledge. */
  workspace: string | null;
  /** spec → "spec"; knowhow → its type (tip, recipe…); wiki → context|entity|summary. */
  type: string;
  category: string | null;
  /** Keywords and tags, lowercased, deduplicated. */
  tags: string[];
  title: string;
  summary: string;
  body: string;
  /** Status as written in the file. */
  declaredStatus: 'active' | 'deprecated';
  /** The status word as written (lowercased), when it says more than active/deprecated: `draft`, `proposed`, `superseded`… */
  storedStatus?: string | undefined;
  confidence: string | null;
  /** YYYY-MM-DD or ISO date the entry carries, if any. */
  date: string | null;
  /** Absolute path of the file holding the entry. */
  file: string;
  line: number | null;
  /** Parent document: entries of one family share a cap in search. */
  family: string;
  sid: string | null;
  /** References to entries this one supersedes (sids, ids or aliases). */
  supersedes: string[];
  supersededBy: string | null;
  related: string[];
  /** Other things this entry points at: knowhow refs, code paths. */
  references: string[];
}

export interface SourceFile {
  path: string;
  mtimeMs: number;
  size: number;
}

/**
 * A pluggable source of entries. Specs and knowhow are built in; the observer
 * adds its wiki through the same interface (`kind: 'wiki'`).
 */
export interface KnowledgeSource {
  readonly name: string;
  listFiles(): SourceFile[];
  /** Entries of one file plus problems found (with file and line). Never throws on bad content. */
  readFile(path: string): { entries: KnowledgeEntry[]; findings: import('./specParser.js').Finding[]; edges?: GraphEdge[] };
}

/** A MaestroGraph edge as read from a file; `dst` is resolved through aliases when traversed. */
export interface GraphEdge {
  src: string;
  rel: 'supersedes' | 'related' | 'references' | 'consumed-by' | 'imports' | 'defines';
  dst: string;
}
