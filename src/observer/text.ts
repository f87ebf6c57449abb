/**
 * Text similarity used by retrieval and dedup (FORMATS §8.6): the match
 * normalisation, the match tokens, requestSimilarity and content Jaccard.
 */

const CJK = '\\u3400-\\u4dbf\\u4e00-\\u9fff\\uf900-\\ufaff';
const CJK_RUN = new RegExp(`[${CJK}]+`, 'g');
const PARTICLES = /[的了吗呢啊吧着过]/g;
const CJK_LATIN = new RegExp(`([${CJK}])([A-Za-z0-9])`, 'g');
const LATIN_CJK = new RegExp(`([A-Za-z0-9])([${CJK}])`, 'g');

/** formatFlowText: a space between CJK and Latin/digits; hard-wrapped Latin lines joined. */
export function formatFlowText(text: string): string {
  return text
    .replace(/([A-Za-z0-9,;:])\n(?=[A-Za-z0-9])/g, '$1 ')
    .replace(CJK_LATIN, '$1 $2')
    .replace(LATIN_CJK, '$1 $2');
}

/** formatFlowText → lowercase → no whitespace (incl. U+3000) → no filler particles. */
export function normalizeMatchText(text: string): string {
  return formatFlowText(text).toLowerCase().replace(/[\s\u3000]+/g, '').replace(PARTICLES, '');
}

/**
 * English function words dropped from match tokens. Not in the notes: without
 * them "how does the cache work" matched "how does the router work" at 0.9,
 * far above the 0.5 prior-hit threshold.
 */
const STOPWORDS = new Set(
  'the and for are but not you all any can had her was one our out has him his how its may new now own say she too use who why did does doing what when where which while with this that these those them then than there their they from into onto over under about after before again also just only some such very will would could should shall here have been being were your yours mine want need like please make made get got let lets using used'.split(' '),
);

/**
 * Match tokens: words longer than 2 chars, `[a-z0-9]{3,}`, CJK runs of ≥2
 * (raw and with particles removed), 2–3-grams of CJK runs of ≥4; length ≥2; unique.
 */
export function matchTokens(text: string): string[] {
  const lower = formatFlowText(text).toLowerCase();
  const out = new Set<string>();
  for (const word of lower.split(/[\s\u3000]+/)) {
    const trimmed = word.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
    if (trimmed.length > 2) out.add(trimmed);
  }
  for (const m of lower.match(/[a-z0-9]{3,}/g) ?? []) out.add(m);
  for (const run of lower.match(CJK_RUN) ?? []) {
    if (run.length >= 2) out.add(run);
    const compact = run.replace(PARTICLES, '');
    if (compact.length >= 2) out.add(compact);
    if (run.length >= 4) {
      for (let n = 2; n <= 3; n += 1) for (let i = 0; i + n <= run.length; i += 1) out.add(run.slice(i, i + n));
    }
  }
  return [...out].filter((t) => t.length >= 2 && !STOPWORDS.has(t));
}

/**
 * requestSimilarity from precomputed parts (the retrieval hot path): the
 * normalised strings, the token counts, and how many query tokens the request has.
 */
export function requestSimilarityFromCounts(qNorm: string, qCount: number, rNorm: string, rCount: number, found: number): number {
  if (!qNorm || !rNorm) return 0;
  if (qNorm === rNorm) return 1;
  const shorter = qNorm.length <= rNorm.length ? qNorm : rNorm;
  const longer = shorter === qNorm ? rNorm : qNorm;
  if (shorter.length >= 4 && longer.includes(shorter)) return 0.85;
  const denominator = Math.max(qCount, rCount);
  return denominator ? found / denominator : 0;
}

export function requestSimilarityPrepared(qNorm: string, qTokens: readonly string[], rNorm: string, rTokens: ReadonlySet<string>): number {
  let found = 0;
  for (const t of qTokens) if (rTokens.has(t)) found += 1;
  return requestSimilarityFromCounts(qNorm, qTokens.length, rNorm, rTokens.size, found);
}

export function requestSimilarity(a: string, b: string): number {
  return requestSimilarityPrepared(normalizeMatchText(a), matchTokens(a), normalizeMatchText(b), new Set(matchTokens(b)));
}

/** Tokens for content Jaccard: lowercase, non word/CJK → space, tokens longer than 1 char. */
export function contentTokens(text: string): Set<string> {
  return new Set(text.toLowerCase().replace(/[^\w\u4e00-\u9fa5]+/g, ' ').split(' ').filter((t) => t.length > 1));
}

export function contentJaccard(a: string, b: string): number {
  const ta = contentTokens(a);
  const tb = contentTokens(b);
  if (!ta.size && !tb.size) return 0;
  let inter = 0;
  for (const t of ta) if (tb.has(t)) inter += 1;
  return inter / (ta.size + tb.size - inter);
}

/** A URL- and filename-safe slug, `^[a-z0-9]+(-[a-z0-9]+)*$`, ≤ 60 chars; '' when nothing is left. */
export function slugify(text: string, max = 60): string {
  const slug = text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return slug.slice(0, max).replace(/-+$/g, '');
}

export const SLUG_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;
