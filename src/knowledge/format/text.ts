/**
 * Small text helpers shared by the parsers, the writers, the index and the ranking:
 * slugs, entity escaping, line endings, and the one tokenizer the index and MMR both use.
 */

/** FORMATS §1.6: lowercase, runs of anything but [a-z0-9] become `-`, trimmed. */
export function slugify(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '"': '&quot;', '<': '&lt;', '>': '&gt;' };

/** The writer's attribute escaping (FORMATS §1.4): & " < > only. */
export function escapeAttr(value: string): string {
  return value.replace(/[&"<>]/g, (c) => ESCAPES[c]!);
}

/**
 * The parser never unescapes (FORMATS §1.4); display and search text do, so a
 * title written as `A &amp; B` is found by "A & B" and shown as such.
 */
export function decodeEntities(value: string): string {
  return value.replace(/&(amp|quot|lt|gt|#39);/g, (_m, name: string) =>
    name === 'amp' ? '&' : name === 'quot' ? '"' : name === 'lt' ? '<' : name === 'gt' ? '>' : "'",
  );
}

/** A line ending as spec and knowhow files hold them. */
export type LineEnding = '\n' | '\r\n';

/**
 * The line ending a writer uses for what it adds to `text`, an existing file: its first line's (a file saved by a
 * Windows editor, or checked out with core.autocrlf, is CRLF); LF without a line break. Not the majority's: a mixed
 * file is one an LF writer appended to (maestro-flow's spec writer does), so its top shows what its editor wrote.
 */
export function lineEnding(text: string): LineEnding {
  const lf = text.indexOf('\n');
  return lf > 0 && text[lf - 1] === '\r' ? '\r\n' : '\n';
}

/** `fragment` (text a writer is about to add) with each line break, `\r\n` or `\n`, written as `eol`; a lone `\r` is left as it is. */
export function withLineEnding(fragment: string, eol: LineEnding): string {
  return fragment.replace(/\r?\n/g, eol);
}

/** Text as the parsers return it, whatever the file's line endings: each `\r\n` read as `\n`, so a CRLF file parses as its LF twin. */
export function lfText(text: string): string {
  return text.replace(/\r\n/g, '\n');
}

const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]/;
const CJK_RUN = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+/g;

export function hasCjk(text: string): boolean {
  return CJK.test(text);
}

/**
 * Text as the full-text index sees it. SQLite's unicode61 tokenizer keeps a
 * CJK run as one token and does not split camelCase, so both are expanded here
 * before indexing and before querying (FORMATS §5.1 tokenizer): CJK runs become
 * overlapping bigrams (a single character stays itself), and `camelCase` adds
 * `camel case` next to the joined form.
 */
export function indexText(text: string): string {
  if (!text) return '';
  let out = text.replace(CJK_RUN, (run) => ` ${cjkBigrams(run).join(' ')} `);
  out = out.replace(/\b([A-Za-z][a-z0-9]+(?:[A-Z][a-z0-9]*)+)\b/g, (word) => `${word} ${word.replace(/([a-z0-9])([A-Z])/g, '$1 $2')}`);
  return out;
}

function cjkBigrams(run: string): string[] {
  const chars = [...run];
  if (chars.length === 1) return chars;
  const grams: string[] = [];
  for (let i = 0; i + 1 < chars.length; i++) grams.push(chars[i]! + chars[i + 1]!);
  return grams;
}

/** Query terms for the index: the same expansion, split into word tokens. */
export function queryTerms(query: string): string[] {
  const expanded = indexText(query.normalize('NFKC')).toLowerCase();
  const terms = expanded.match(/[\p{L}\p{N}_]+/gu) ?? [];
  const seen = new Set<string>();
  const out: string[] = [];
  for (const t of terms) {
    if (seen.has(t)) continue;
    seen.add(t);
    out.push(t);
  }
  return out;
}

/** Tokens for similarity (MMR, FORMATS §5.2): `[\p{L}\p{N}_-]+`, lowercased. */
export function similarityTokens(text: string): Set<string> {
  return new Set((text.toLowerCase().match(/[\p{L}\p{N}_-]+/gu) ?? []).filter((t) => t.length > 1));
}

export function jaccard(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 && b.size === 0) return 0;
  let inter = 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  for (const t of small) if (large.has(t)) inter++;
  return inter / (a.size + b.size - inter);
}

/** What a file that is not text holds, as findings and refusals say it. */
export const BINARY_CONTENT = 'file holds binary (NUL or invalid UTF-8) content';

/**
 * The 1-based line where `text`, read as UTF-8, shows the file is not text: its first NUL, or else the first
 * U+FFFD the decoder put in for bytes that are not UTF-8; undefined when neither. The spec parser skips such a
 * file, and every writer refuses to rewrite one (spec append, knowhow lifecycle, wiki update): text written back
 * would hold U+FFFD (EF BF BD) where the original bytes were.
 */
export function binaryContentLine(text: string): number | undefined {
  const nul = text.indexOf('\u0000');
  const at = nul !== -1 ? nul : text.indexOf('\ufffd');
  return at === -1 ? undefined : lineAt(text, at);
}

/** 1-based line number of a character offset. */
export function lineAt(text: string, offset: number): number {
  return lineIndex(text)(offset);
}

/** Line lookup for many offsets in one text: newline offsets once, then binary search. */
export function lineIndex(text: string): (offset: number) => number {
  const breaks: number[] = [];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) breaks.push(i);
  return (offset: number) => {
    let lo = 0;
    let hi = breaks.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (breaks[mid]! < offset) lo = mid + 1;
      else hi = mid;
    }
    return lo + 1;
  };
}
