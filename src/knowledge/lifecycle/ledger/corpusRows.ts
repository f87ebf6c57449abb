/**
 * The corpus fingerprint's rows (corpusDocs.ts): sorted rows kept in blocks,
 * each with its serialized text and the sha256 state after it, so after a
 * change hashing resumes at the first changed block.
 */
import { createHash, type Hash } from 'node:crypto';

const BLOCK = 64;

/** `seq`: position in its file; with `file` it orders rows of equal (target, id) as a stable sort over the listing would. */
export type Row = { target: string; id: string; json: string; file: string; seq: number };

export interface Block {
  rows: Row[];
  /** Rows joined by ","; null when the block changed. */
  text: string | null;
  /** sha256 state after "[" and every row up to the end of this block; null when stale. */
  after: Hash | null;
}

const collator = new Intl.Collator(); // the order localeCompare gives, as in recipes.ts
export const cmpRow = (a: Row, b: Row) => collator.compare(a.target, b.target) || collator.compare(a.id, b.id) || (a.file < b.file ? -1 : a.file > b.file ? 1 : a.seq - b.seq);

export function blocksOf(rows: Row[]): Block[] {
  const out: Block[] = [];
  for (let i = 0; i < rows.length; i += BLOCK) out.push({ rows: rows.slice(i, i + BLOCK), text: null, after: null });
  return out;
}

/** Inserts a row in order; marks the block it lands in stale. Blocks are non-empty. */
export function insertRow(blocks: Block[], r: Row): void {
  if (!blocks.length) {
    blocks.push({ rows: [r], text: null, after: null });
    return;
  }
  // First block whose last row sorts after r (or the last block).
  let lo = 0;
  let hi = blocks.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cmpRow(blocks[mid]!.rows.at(-1)!, r) <= 0) lo = mid + 1;
    else hi = mid;
  }
  const b = blocks[lo]!;
  let i = 0;
  let j = b.rows.length;
  while (i < j) {
    const mid = (i + j) >> 1;
    if (cmpRow(b.rows[mid]!, r) <= 0) i = mid + 1;
    else j = mid;
  }
  b.rows.splice(i, 0, r);
  b.text = null;
  b.after = null;
  if (b.rows.length > 2 * BLOCK) blocks.splice(lo, 1, { rows: b.rows.slice(0, BLOCK), text: null, after: null }, { rows: b.rows.slice(BLOCK), text: null, after: null });
}

/** sha256 of `[` + rows joined by `,` + `]`, resuming after the last unchanged block. */
export function fingerprintOfBlocks(blocks: Block[]): string {
  let k = 0;
  // Every state after the first changed block depends on it: resume there, recompute the rest.
  while (k < blocks.length && blocks[k]!.text !== null && blocks[k]!.after !== null) k++;
  let h: Hash;
  if (k === 0) h = createHash('sha256').update('[');
  else h = blocks[k - 1]!.after!.copy();
  for (let i = k; i < blocks.length; i++) {
    const b = blocks[i]!;
    b.text ??= b.rows.map((r) => r.json).join(',');
    h.update(i === 0 ? b.text : `,${b.text}`);
    b.after = h.copy();
  }
  return h.update(']').digest('hex');
}
