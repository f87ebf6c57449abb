/**
 * The matcher's text features (FORMATS §4.4): tokens and trigrams of the
 * normalised text, their Jaccard/Dice similarity, and a text's stance.
 */
import { normB } from '../ledger/recipes.js';

export const TOKEN_RE = /\p{Script=Han}|[\p{L}\p{N}_-]+/gu;

function tokens(nb: string): Set<string> {
  return new Set(nb.match(TOKEN_RE) ?? []);
}
/**
 * A trigram as a number, so no substring is allocated: three code units below
 * 1024 (Latin, Greek, Cyrillic…) pack into 30 bits, a small integer V8 hashes
 * cheaply; any other trigram is 2^50 + its three UTF-16 code units in 48 bits
 * (exact in a double, never equal to a packed key). A string shorter than 3
 * is its own (string) key; a 3-char string's key equals its one window's.
 */
export type TriKey = number | string;
export const triKey = (s: string, i: number) => {
  const a = s.charCodeAt(i);
  const b = s.charCodeAt(i + 1);
  const c = s.charCodeAt(i + 2);
  return a < 1024 && b < 1024 && c < 1024 ? (a << 20) | (b << 10) | c : 1125899906842624 + a * 4294967296 + b * 65536 + c;
};
export const squeeze = (nb: string) => nb.replace(/\s+/g, '');
function trigrams(nb: string): Set<TriKey> {
  const s = squeeze(nb);
  if (s.length < 3) return new Set(s ? [s] : []);
  const out = new Set<TriKey>();
  for (let i = 0; i + 3 <= s.length; i++) out.add(triKey(s, i));
  return out;
}
function overlap<T>(a: Set<T>, b: Set<T>): number {
  const [small, big] = a.size <= b.size ? [a, b] : [b, a];
  let n = 0;
  for (const x of small) if (big.has(x)) n++;
  return n;
}

export interface Feat {
  nb: string;
  tok: Set<string>;
  tri: Set<TriKey>;
}
export function feat(text: string): Feat {
  const nb = normB(text);
  return { nb, tok: tokens(nb), tri: trigrams(nb) };
}
/** The set-based definition; matchCandidate computes the same value from posting counts (tested equal). */
export function similarity(a: Feat, b: Feat): number {
  const it = overlap(a.tok, b.tok);
  const union = a.tok.size + b.tok.size - it;
  const jac = union ? it / union : 0;
  const denom = a.tri.size + b.tri.size;
  const dice = denom ? (2 * overlap(a.tri, b.tri)) / denom : 0;
  return Math.min(1, 0.55 * jac + 0.45 * dice);
}

export type Stance = 'negative' | 'positive' | 'unknown';
const NEG_EN = /\b(must not|never|forbid(?:den)?|prohibit(?:ed)?)\b/g;
const NEG_ZH = /不得|禁止|严禁|不可|不能/g;
const POS_EN = /\b(must|require(?:d)?|shall|should|allow(?:ed)?)\b/;
const POS_ZH = /必须|应当|需要|允许|务必/;

export function stanceOf(nb: string): Stance {
  const neg = NEG_EN.test(nb) || NEG_ZH.test(nb);
  NEG_EN.lastIndex = 0;
  NEG_ZH.lastIndex = 0;
  const rest = nb.replace(NEG_EN, ' ').replace(NEG_ZH, ' ');
  const pos = POS_EN.test(rest) || POS_ZH.test(rest);
  if (neg && !pos) return 'negative';
  if (pos && !neg) return 'positive';
  return 'unknown';
}
export function stanceScore(a: Stance, b: Stance): number {
  if (a === 'unknown' || b === 'unknown') return 0.5;
  return a === b ? 1 : 0;
}
