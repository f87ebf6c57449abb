/**
 * The length of each indexed field in tokens, stored per entry at index time
 * (`entries.len_*`) for BM25F's per-field length normalisation
 * (search/bm25f.ts). Tokens are counted as the index splits the index text
 * (format/text.ts indexText): runs of letters and numbers.
 */

export type FieldName = 'title' | 'summary' | 'tags' | 'body';
export const FIELDS: readonly FieldName[] = ['title', 'summary', 'tags', 'body'];
export type FieldLengths = Record<FieldName, number>;

/** The number of tokens of an index text. */
export function tokenCount(indexed: string): number {
  let n = 0;
  let inWord = false;
  for (let i = 0; i < indexed.length; i++) {
    const c = indexed.charCodeAt(i);
    const word = c < 128 ? (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) : isWordChar(indexed, i);
    if (word && !inWord) n++;
    inWord = word;
  }
  return n;
}

const WORD = /[\p{L}\p{N}]/u;

/** Whether the character at `i` (not ASCII) is a letter or a number. */
export function isWordChar(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  // The low half of a surrogate pair belongs to the character its high half started.
  if (c >= 0xdc00 && c <= 0xdfff && i > 0) return isWordChar(text, i - 1);
  return WORD.test(String.fromCodePoint(text.codePointAt(i)!));
}
