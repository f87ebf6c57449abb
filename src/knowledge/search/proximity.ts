/**
 * Re-scoring of the candidate pool. The phrase/proximity boost of FORMATS §5.1: results where neighbouring
 * query words also sit near each other in the entry (within 8 tokens) gain up
 * to +20 %, weighted title 0.5, summary 0.3, body 0.2. It only reorders the
 * candidate pool; it never adds or removes a result.
 *
 * Also the coverage factor of FORMATS §5.1 (below). Measured on Cranfield
 * (bench/search.ts, nDCG@10, balanced / diversity off): plain FTS5 BM25F
 * 0.3567 / 0.3629; + proximity 0.3587 / 0.3655; + coverage 0.3680 / 0.3690.
 * MMR's diversity costs a little on a collection whose judgements reward
 * redundancy; these two pay for it.
 */

export const PROXIMITY_WINDOW = 8;
export const PROXIMITY_MAX_BOOST = 0.2;
const FIELD_WEIGHT = { title: 0.5, summary: 0.3, body: 0.2 } as const;

/** A light, symmetric normaliser (no dictionary): enough to line up plural and -ing/-ed forms. */
export function stem(word: string): string {
  let w = word.toLowerCase();
  if (w.length <= 3) return w;
  if (w.length > 5 && w.endsWith('ing')) w = w.slice(0, -3);
  else if (w.length > 4 && w.endsWith('ed')) w = w.slice(0, -2);
  else if (w.length > 4 && w.endsWith('es')) w = w.slice(0, -2);
  else if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss')) w = w.slice(0, -1);
  return w;
}

/** Token positions of the wanted stems; looks at the first 16 000 characters only (bounded cost per candidate). */
function positions(text: string, wanted: Set<string>): Map<string, number[]> {
  const out = new Map<string, number[]>();
  const words = text.slice(0, 16_000).toLowerCase().split(/[^\p{L}\p{N}]+/u);
  // Most tokens share no 3-letter prefix with a query stem: skip stemming them.
  const prefixes = new Set([...wanted].map((w) => w.slice(0, 3)));
  let pos = 0;
  for (const raw of words) {
    if (!raw) continue;
    const i = pos++;
    if (!prefixes.has(raw.slice(0, 3))) continue;
    const s = stem(raw);
    if (!wanted.has(s)) continue;
    let list = out.get(s);
    if (!list) out.set(s, (list = []));
    list.push(i);
  }
  return out;
}

function near(a: number[] | undefined, b: number[] | undefined): boolean {
  if (!a || !b) return false;
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (Math.abs(a[i]! - b[j]!) <= PROXIMITY_WINDOW) return true;
    if (a[i]! < b[j]!) i++;
    else j++;
  }
  return false;
}

export interface ProximityQuery {
  pairs: Array<[string, string]>;
  terms: Set<string>;
}

/** Neighbouring content words of the query, stemmed. Null when there is no pair. */
export function proximityQuery(contentTerms: string[]): ProximityQuery | null {
  const stems = contentTerms.map(stem);
  const pairs: Array<[string, string]> = [];
  for (let i = 0; i + 1 < stems.length; i++) if (stems[i] !== stems[i + 1]) pairs.push([stems[i]!, stems[i + 1]!]);
  if (pairs.length === 0) return null;
  return { pairs, terms: new Set(stems) };
}

/**
 * FORMATS §5.1 coverage penalty: 0.65 + 0.35 × (share of the query's content
 * words the entry contains, stemmed). A soft AND: entries that match more of
 * the question rank above entries that repeat one of its words.
 */
export function coverageFactor(stems: Set<string>, fields: { title: string; summary: string; body: string; tags: string[] }): number {
  if (stems.size < 2) return 1;
  const prefixes = new Set([...stems].map((w) => w.slice(0, 3)));
  const found = new Set<string>();
  const text = `${fields.title} ${fields.summary} ${fields.tags.join(' ')} ${fields.body.slice(0, 16_000)}`.toLowerCase();
  // CJK query terms are bigrams of a run: look for them as substrings.
  for (const s of stems) if (/[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]/.test(s) && text.includes(s)) found.add(s);
  for (const raw of text.split(/[^\p{L}\p{N}]+/u)) {
    if (!raw || !prefixes.has(raw.slice(0, 3))) continue;
    const s = stem(raw);
    if (stems.has(s)) found.add(s);
    if (found.size === stems.size) break;
  }
  return 0.65 + (0.35 * found.size) / stems.size;
}

/** Multiplier in [1, 1.2]. */
export function proximityBoost(q: ProximityQuery, fields: { title: string; summary: string; body: string }): number {
  let total = 0;
  for (const field of ['title', 'summary', 'body'] as const) {
    if (!fields[field]) continue;
    const pos = positions(fields[field], q.terms);
    let hit = 0;
    for (const [a, b] of q.pairs) if (near(pos.get(a), pos.get(b))) hit++;
    total += FIELD_WEIGHT[field] * (hit / q.pairs.length);
  }
  return 1 + PROXIMITY_MAX_BOOST * total;
}

const WORD_CHAR = /^[\p{L}\p{N}]$/u;
const CJK_TERM = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]/;
const SLICE = 16_000;

/**
 * `proximityBoost` and `coverageFactor` of one candidate in one pass: each
 * field is lowercased and split once and both read the same tokens (search.ts
 * calls this for every candidate). Returns exactly what the two functions
 * return; an entry with a title or summary past 16 000 characters (where
 * their slicing differs) takes the two functions themselves.
 */
export function rescoreFactors(q: ProximityQuery | null, stems: Set<string>, fields: { title: string; summary: string; body: string; tags: string[] }): { proximity: number; coverage: number; found: Set<string> | null } {
  const cover = stems.size >= 2;
  if (!q && !cover) return { proximity: 1, coverage: 1, found: null };
  if (fields.title.length > SLICE || fields.summary.length > SLICE) return { proximity: q ? proximityBoost(q, fields) : 1, coverage: coverageFactor(stems, fields), found: null };
  const wanted = q ? q.terms : stems;
  const same = !q || (cover && sameSet(q.terms, stems));
  const prefixes = new Set<string>();
  for (const w of wanted) prefixes.add(w.slice(0, 3));
  if (!same) for (const w of stems) prefixes.add(w.slice(0, 3));
  const found = new Set<string>();
  let total = 0;
  const keys = new Set<number>();
  for (const p of prefixes) keys.add(prefixKey(p, 0, p.length));
  const scan = (text: string, weight: number) => {
    const pos = q && weight > 0 ? new Map<string, number[]>() : null;
    let i = 0;
    // The tokens of `text.split(/[^\p{L}\p{N}]+/u)` without building them: only a
    // token whose first three code units are a wanted prefix is cut out and stemmed.
    const n = text.length;
    let at = 0;
    while (at < n) {
      while (at < n && !isWordAt(text, at)) at += unitLength(text, at);
      if (at >= n) break;
      const start = at;
      while (at < n && isWordAt(text, at)) at += unitLength(text, at);
      const index = i++;
      if (!keys.has(prefixKey(text, start, at))) continue;
      const s = stem(text.slice(start, at));
      if (cover && stems.has(s)) found.add(s);
      if (pos && q!.terms.has(s)) {
        let list = pos.get(s);
        if (!list) pos.set(s, (list = []));
        list.push(index);
      }
    }
    if (pos) {
      let hit = 0;
      for (const [a, b] of q!.pairs) if (near(pos.get(a), pos.get(b))) hit++;
      total += weight * (hit / q!.pairs.length);
    }
  };
  const title = fields.title.toLowerCase();
  const summary = fields.summary.toLowerCase();
  const tags = fields.tags.join(' ').toLowerCase();
  const body = fields.body.slice(0, SLICE).toLowerCase();
  // Proximity skips an empty field; coverage reads every field.
  scan(title, fields.title ? FIELD_WEIGHT.title : 0);
  scan(summary, fields.summary ? FIELD_WEIGHT.summary : 0);
  if (cover) scan(tags, 0);
  scan(body, fields.body ? FIELD_WEIGHT.body : 0);
  let coverage = 1;
  if (cover) {
    for (const s of stems) if (CJK_TERM.test(s) && `${title} ${summary} ${tags} ${body}`.includes(s)) found.add(s);
    coverage = 0.65 + (0.35 * found.size) / stems.size;
  }
  // `found`: the query stems this entry holds (with two or more stems), for the minimum match of search.ts.
  return { proximity: q ? 1 + PROXIMITY_MAX_BOOST * total : 1, coverage, found: cover ? found : null };
}

function sameSet(a: Set<string>, b: Set<string>): boolean {
  if (a.size !== b.size) return false;
  for (const x of a) if (!b.has(x)) return false;
  return true;
}

/** The first three UTF-16 code units of text[start, end) as one number (0 pads a shorter token; 0 is never a word character). */
function prefixKey(text: string, start: number, end: number): number {
  const c0 = text.charCodeAt(start);
  const c1 = start + 1 < end ? text.charCodeAt(start + 1) : 0;
  const c2 = start + 2 < end ? text.charCodeAt(start + 2) : 0;
  return c0 * 4294967296 + c1 * 65536 + c2;
}

function unitLength(text: string, at: number): number {
  const c = text.charCodeAt(at);
  return c >= 0xd800 && c <= 0xdbff && at + 1 < text.length && (text.charCodeAt(at + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
}

/** Whether the code point at `at` is a letter or a number (\p{L} or \p{N}), with an ASCII fast path. */
function isWordAt(text: string, at: number): boolean {
  const c = text.charCodeAt(at);
  if (c < 128) return (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || (c >= 65 && c <= 90);
  return WORD_CHAR.test(String.fromCodePoint(text.codePointAt(at)!));
}
