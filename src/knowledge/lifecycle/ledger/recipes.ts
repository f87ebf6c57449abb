/**
 * The hashing and id recipes of FORMATS §4.2, exactly: candidate ids, content
 * hashes, the candidate snapshot hash and the corpus fingerprint. Golden values
 * (FORMATS §7.3) are tested in recipes.test.ts; change nothing here without
 * them.
 */
import { createHash } from 'node:crypto';

export const MATCHER_REVISION = 'semantic-delta/1.0';
export const EMPTY_SHA = '4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945';

export function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** normA: NFKC, lowercase, whitespace collapsed, trimmed. */
export function normA(x: string): string {
  return x.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();
}

/** normB: normA minus quote characters (deleted before the whitespace collapse). */
export function normB(x: string): string {
  return x.normalize('NFKC').toLowerCase().replace(/[“”‘’"'`]/g, '').replace(/\s+/g, ' ').trim();
}

export type Target = 'spec' | 'knowhow';

export function candidateId(target: string, content: string): string {
  return `KDC-${sha256(`${target}\0${normA(content)}`).slice(0, 16)}`;
}

export function candidateContentHash(content: string): string {
  return sha256(normA(content));
}

export interface SnapshotCandidate {
  candidate_id: string;
  target: string;
  action: string;
  title: string;
  content: string;
  category: string | null;
  source_kind: string;
}

/**
 * 'mf-newer' appends `repository_binding` and `payload` (null for every
 * candidate we write); 'v0.5.79' is the 7-key layout. We write 'mf-newer',
 * the layout of the newest receipts we know (FORMATS §7.3).
 */
export type SnapshotLayout = 'mf-newer' | 'v0.5.79';

export function candidateSnapshotHash(cands: SnapshotCandidate[], layout: SnapshotLayout = 'mf-newer'): string {
  const views = [...cands]
    .sort((a, b) => a.candidate_id.localeCompare(b.candidate_id))
    .map((c) => {
      const v: Record<string, unknown> = { candidate_id: c.candidate_id, target: c.target, action: c.action, title: normB(c.title), content: normB(c.content), category: c.category, source_kind: c.source_kind };
      if (layout === 'mf-newer') {
        v.repository_binding = null;
        v.payload = null;
      }
      return v;
    });
  return sha256(JSON.stringify(views));
}

/** Evidence root normalization (FORMATS §4.2): NFKC, trim, `\`→`/`, whitespace collapsed; deduped, sorted. */
export function normalizeEvidenceRoots(refs: string[]): string[] {
  return [...new Set(refs.map((r) => r.normalize('NFKC').trim().replace(/\\/g, '/').replace(/\s+/g, ' ')).filter(Boolean))].sort();
}

/** One corpus document as the fingerprint and the matcher see it. */
export interface CorpusDoc {
  id: string;
  target: Target;
  title: string;
  content: string;
  status: string;
  confidence: string | null;
  related: string[];
  supersedes: string[];
  superseded_by: string | null;
  /** Relative to `.workflow/`. */
  source_path: string;
  source_line: number | null;
  category: string | null;
  aliases: string[];
}

export interface FingerprintRow {
  id: string;
  target: string;
  title: string;
  content_hash: string;
  status: string;
  confidence: string | null;
  related: string[];
  supersedes: string[];
  superseded_by: string | null;
}

export function fingerprintRow(d: CorpusDoc): FingerprintRow {
  return {
    id: d.id,
    target: d.target,
    title: normB(d.title),
    content_hash: sha256(normB(d.content)),
    status: d.status,
    confidence: d.confidence,
    related: [...d.related].sort(),
    supersedes: [...d.supersedes].sort(),
    superseded_by: d.superseded_by,
  };
}

/** sha256 of the sorted rows; rows may come from a per-file cache (corpusDocs.ts). */
export function fingerprintOf(rows: FingerprintRow[]): string {
  return fingerprintOfSerialized(rows.map((r) => ({ target: r.target, id: r.id, json: JSON.stringify(r) })));
}

// Same order as localeCompare (default locale), much cheaper per comparison.
const collator = new Intl.Collator();

/** The same hash from rows already serialized one by one (the per-file cache keeps them): `[` + rows joined by `,` + `]` is JSON.stringify of the array. */
export function fingerprintOfSerialized(rows: Array<{ target: string; id: string; json: string }>): string {
  const sorted = [...rows].sort((a, b) => collator.compare(a.target, b.target) || collator.compare(a.id, b.id));
  return sha256(`[${sorted.map((r) => r.json).join(',')}]`);
}


/** Session-level snapshot (FORMATS §4.2): normA text, evidence roots and source_snapshot in the view. */
export function sessionSnapshotHash(cands: Array<SnapshotCandidate & { evidence_refs: string[]; source_snapshot?: unknown }>): string {
  const views = [...cands]
    .sort((a, b) => a.candidate_id.localeCompare(b.candidate_id))
    .map((c) => ({
      candidate_id: c.candidate_id,
      target: c.target,
      action: c.action,
      title: normA(c.title),
      content: normA(c.content),
      category: c.category,
      source_kind: c.source_kind,
      evidence_roots: normalizeEvidenceRoots(c.evidence_refs),
      source_snapshot: c.source_snapshot ?? null,
      repository_binding: null,
      payload: null,
    }));
  return sha256(JSON.stringify(views));
}
