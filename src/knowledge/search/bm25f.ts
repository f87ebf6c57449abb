/**
 * BM25F re-scoring of the candidate pool (issue 16 item 2): stemmed matching
 * for recall, exact forms for identifiers, and each field normalised by its
 * own length.
 *
 * FTS5's bm25() (index/query.ts) picks the candidates. It sums the
 * column-weighted frequencies and normalises them by the length of the whole
 * entry, so a one-word title match is judged against the body's length, and a
 * common word in a short title outweighs a rare word in the body. Here every
 * field is normalised by its own length against that field's corpus average
 * (BM25F, Robertson & Zaragoza 2009), with b per field, before one saturation:
 *
 *   tf~(t) = Σ_f w_f · tf_f(t) / (1 − b_f + b_f · len_f / avglen_f)
 *   score  = Σ_t idf(t) · tf~(t) · (k1 + 1) / (tf~(t) + k1)
 *
 * k1, the field weights and each field's b are FORMATS §5.1's (maestro-flow's
 * dashboard search): k1 1.5; title (5, b 0.3), summary (1.5, 0.75), tags (3, 0),
 * body (0.5, 0.75) — except the title's weight, 3.5 here (see below). idf is FORMATS §5.1's ln(1 + (N − df + 0.5)/(df + 0.5)) of
 * the stem (FTS5's own idf is 0 for a word in half the entries). Stems are
 * Porter's (the `stemmer` package, which gives the same stems as SQLite's
 * porter tokenizer: all 226,526 tokens of Cranfield compared), so a term
 * matches here exactly when it matched in FTS5.
 *
 * Exact forms: an identifier in the query (camelCase, snake_case, letters with
 * digits, dotted names) is a name, not a word to inflect — `parseOption` is not
 * `parseOptions`. Its exact occurrences count EXACT_IDENTIFIER_BONUS more than
 * a stemmed variant's. Plain words get no such bonus: on Cranfield an exact-form
 * bonus for every word cost nDCG@10 (0.3813 → 0.3750 at +25 %).
 *
 * Title boost scaled by idf (titleScale): a common query word in a title
 * counts less than the boost alone would make it, so a rare word in an entry's
 * body is not buried under it (the typical miss the issue reports, title 10×
 * body). Cranfield, whole pipeline, title weight 5: 0.3850 without, 0.3916 at
 * power 0.5, 0.3928 at power 1, 0.3903 at power 2, 0.3837 at power 3.
 *
 * Title weight 3.5 and power 4 (issue 16 item 2). Measured on a generated
 * operations wiki (ranking.test.ts: ordinary notes, ten "Deploy notes" titles,
 * one runbook whose body alone holds "kubelet"; query "deploy kubelet"), the
 * runbook's rank, balanced / diversity off, with "deploy" in 14 %, 10 %, 6 %,
 * 3 % of the titles: weight 5 power 2 — 1/1, 2/6, 6/7, 7/out of the page;
 * weight 3.5 power 4 — first in all four; with the runbook's body twice as
 * long (length normalisation weighs against it) — first down to 6 %, 2/6 at 3 %
 * (weight 5 power 2: 6/7 already at 14 %). Cranfield, whole pipeline /
 * diversity off: 0.3903 / 0.3998 before, 0.3842 / 0.3885 after (target 0.38).
 * Rejected on the same two sets: k1 0.6–1.2 (Cranfield 0.376–0.388, still
 * second at 6 %); body weight 1 (0.3727); a coverage factor weighted by idf
 * instead of word count (0.3881 alone, second at 6 %; below 0.38 beside this).
 *
 * Measured on Cranfield (nDCG@10, BM25F alone over FTS5's best 40, diversity
 * off, no proximity or coverage): FTS5 bm25 with the same weights 0.3639, with
 * FORMATS' idf 0.3660, per-field normalisation (this file) 0.373–0.381 over
 * k1 1.2–2 and b 0.3–0.9 — differences within noise, so FORMATS' values stay.
 * Re-scoring only FTS5's best 40 loses nothing against scoring every document.
 * With feedback.ts and the whole pipeline: see bench/search.ts.
 */
import { stemmer } from 'stemmer';
import { indexText } from '../format/text.js';
import { FIELDS, isWordChar, type FieldLengths, type FieldName } from '../index/fieldLengths.js';

export { FIELDS, type FieldLengths, type FieldName };

/** Per-field weight (FORMATS §5.1 boosts, as in the FTS5 candidate query, but title 3.5: see the header) and length normalisation b. */
export const BM25F_FIELDS: Readonly<Record<FieldName, { weight: number; b: number }>> = {
  title: { weight: 3.5, b: 0.3 },
  summary: { weight: 1.5, b: 0.75 },
  tags: { weight: 3, b: 0 },
  body: { weight: 0.5, b: 0.75 },
};
export const BM25F_K1 = 1.5;
/** How strongly a common word's title boost shrinks (titleScale); 0 turns the scaling off. See the header for the figures. */
export const TITLE_IDF_POWER = 4;
/** An identifier's exact occurrences weigh this much more than its stemmed variants'. */
export const EXACT_IDENTIFIER_BONUS = 1;
/** Text read per field (bounded cost per candidate); lengths are counted over the whole field at index time. */
const SLICE = 16_000;

/** Lower-case, without diacritics (the index's unicode61 `remove_diacritics 2`). */
export function fold(token: string): string {
  const lower = token.toLowerCase();
  for (let i = 0; i < lower.length; i++) if (lower.charCodeAt(i) >= 128) return lower.normalize('NFKD').replace(/\p{M}/gu, '');
  return lower;
}

/** Porter stem of a folded token. */
export function porterStem(token: string): string {
  return stemmer(token);
}

/** A query word that names something (FORMATS §5.1 anchor tokens, without plain hyphenated words). */
export function isIdentifierWord(word: string): boolean {
  return /[a-z][A-Z]/.test(word) || /^[A-Z]{2,}[a-z]/.test(word) || /[_.$]/.test(word.replace(/^[.]+|[.]+$/g, '')) || (/\p{L}/u.test(word) && /\d/.test(word));
}

export interface Bm25fQuery {
  /** stem → idf. */
  idf: Map<string, number>;
  /** The query's own terms for bm25fTerms (weight 1). */
  terms: Map<string, WeightedTerm>;
  /** The highest idf among the query's terms (title scaling, TITLE_IDF_POWER). */
  maxIdf: number;
  /** Folded exact forms of the query's identifiers → their stem. */
  exact: Map<string, string>;
  /** First two characters of every stem and exact form: other tokens are skipped unstemmed. */
  prefixes: Set<number>;
  /** The corpus's average length of each field. */
  avg: FieldLengths;
}

/**
 * The query side: `words` are the searched words (index/query.ts contentTerms), `raw` the query as typed
 * (for identifiers), `df` a term's entry count, `rows` the number of entries.
 */
export function bm25fQuery(words: string[], raw: string, df: (term: string) => number, rows: number, avg: FieldLengths): Bm25fQuery {
  const idf = new Map<string, number>();
  // A term may hold several index tokens (`parse_option` is the phrase "parse option" to FTS5).
  for (const token of words.flatMap((t) => t.match(/[\p{L}\p{N}]+/gu) ?? [])) {
    const s = porterStem(fold(token));
    if (idf.has(s)) continue;
    const n = df(token);
    idf.set(s, Math.log(1 + (rows - n + 0.5) / (n + 0.5)));
  }
  const exact = new Map<string, string>();
  for (const w of raw.normalize('NFKC').split(/[^\p{L}\p{N}_.$]+/u)) {
    if (!w || !isIdentifierWord(w)) continue;
    for (const part of w.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
      const f = fold(part);
      const s = porterStem(f);
      if (idf.has(s) && f !== s) exact.set(f, s);
    }
  }
  const terms = new Map([...idf].map(([st, v]) => [st, { idf: v, weight: 1 }]));
  return { idf, terms, maxIdf: Math.max(0, ...idf.values()), exact, prefixes: prefixKeys([...idf.keys(), ...exact.keys()]), avg };
}

/** The first two code units of a folded word as one number: tokens are matched on it before they are cut out and stemmed. */
function prefixKey(c0: number, c1: number): number {
  return c0 * 65536 + c1;
}

/** Prefix keys of folded words (their stems start with the same two characters as the words). */
export function prefixKeys(words: Iterable<string>): Set<number> {
  const keys = new Set<number>();
  for (const w of words) keys.add(prefixKey(w.charCodeAt(0), w.length > 1 ? w.charCodeAt(1) : 0));
  return keys;
}

const lowerAscii = (c: number) => (c >= 65 && c <= 90 ? c + 32 : c);

/**
 * Calls `fn` with every token (folded) of `text` as the index splits it: runs of letters and numbers.
 * With `only`, an ASCII token whose first two characters are not among those keys is skipped uncut.
 */
export function forEachToken(text: string, fn: (token: string) => void, only?: Set<number>): void {
  let start = -1;
  let ascii = true;
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 32;
    const word = c < 128 ? (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) : isWordChar(text, i);
    if (word) {
      if (start < 0) {
        start = i;
        ascii = true;
      }
      if (c >= 128) ascii = false;
    } else if (start >= 0) {
      if (ascii) {
        if (!only || only.has(prefixKey(lowerAscii(text.charCodeAt(start)), i - start > 1 ? lowerAscii(text.charCodeAt(start + 1)) : 0))) fn(text.slice(start, i).toLowerCase());
      } else {
        const folded = fold(text.slice(start, i));
        if (!only || only.has(prefixKey(folded.charCodeAt(0), folded.length > 1 ? folded.charCodeAt(1) : 0))) fn(folded);
      }
      start = -1;
    }
  }
}

/** The index text of each field of an entry, cut to SLICE characters. */
export function fieldTexts(fields: Record<FieldName, string>): Record<FieldName, string> {
  const cut = (t: string) => indexText(t.length > SLICE ? t.slice(0, SLICE) : t);
  return { title: cut(fields.title), summary: cut(fields.summary), tags: cut(fields.tags), body: cut(fields.body) };
}

/** Stems of folded tokens, memoised for the process (a pure function of the token; bounded). */
const STEMS = new Map<string, string>();
const MAX_STEMS = 100_000;
export function stemCached(folded: string): string {
  let s = STEMS.get(folded);
  if (s === undefined) {
    if (STEMS.size >= MAX_STEMS) STEMS.clear();
    STEMS.set(folded, (s = porterStem(folded)));
  }
  return s;
}

export interface WeightedTerm {
  idf: number;
  /** 1 for a query word; less for a feedback word (feedback.ts). */
  weight: number;
}

/**
 * A word's title weight is scaled by its idf against the query's rarest word, (idf / maxIdf)^TITLE_IDF_POWER:
 * a common query word in a title counts less than the title boost alone would make it, so a rare word in
 * an entry's body is not buried under it. The query's rarest word keeps the full boost.
 */
export function titleScale(q: Bm25fQuery, idf: number): number {
  return q.maxIdf > 0 ? Math.min(1, idf / q.maxIdf) ** TITLE_IDF_POWER : 1;
}

/**
 * Σ over `terms` of weight × BM25F for one entry: `texts` from fieldTexts, `lens` its stored field
 * lengths. Exact forms of the query's identifiers add EXACT_IDENTIFIER_BONUS.
 */
export function bm25fTerms(q: Bm25fQuery, terms: Map<string, WeightedTerm>, prefixes: Set<number>, texts: Record<FieldName, string>, lens: FieldLengths): number {
  const tf = new Map<string, number>();
  for (const f of FIELDS) {
    const text = texts[f];
    if (!text) continue;
    const { weight, b } = BM25F_FIELDS[f];
    const norm = weight / (1 - b + (b * lens[f]) / (q.avg[f] || 1));
    forEachToken(
      text,
      (folded) => {
        const s = stemCached(folded);
        const t = terms.get(s);
        if (!t) return;
        const bonus = q.exact.get(folded) === s ? EXACT_IDENTIFIER_BONUS : 0;
        tf.set(s, (tf.get(s) ?? 0) + norm * (1 + bonus) * (f === 'title' ? titleScale(q, t.idf) : 1));
      },
      prefixes,
    );
  }
  let score = 0;
  for (const [s, f] of tf) {
    const t = terms.get(s)!;
    score += (t.weight * t.idf * f * (BM25F_K1 + 1)) / (f + BM25F_K1);
  }
  return score;
}

/** The BM25F score of one entry for the query's own terms. */
export function bm25fScore(q: Bm25fQuery, texts: Record<FieldName, string>, lens: FieldLengths): number {
  return bm25fTerms(q, q.terms, q.prefixes, texts, lens);
}
