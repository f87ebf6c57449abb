/**
 * BERT tokenization for the local ONNX embedder: the basic tokenizer (clean
 * up, CJK characters as their own words, optional lowercasing with accents
 * stripped, split on whitespace and punctuation) followed by greedy
 * longest-match-first WordPiece with `##` continuations, wrapped in
 * `[CLS] … [SEP]` and truncated to the model's length.
 *
 * The vocabulary comes from the files the user points to: a `vocab.txt` (one
 * token per line, the line number is the id) or a Hugging Face
 * `tokenizer.json` whose model is WordPiece. Nothing is downloaded.
 */
import { readFileSync } from 'node:fs';
import { MaestroError } from '../../core/errors.js';
import { notJsonMessage } from '../../lib/jsonError.js';

export interface WordPieceTokenizer {
  readonly size: number;
  readonly lowercase: boolean;
  /** Token ids with `[CLS]`/`[SEP]`, at most `maxTokens` long. */
  encode(text: string, maxTokens: number): number[];
  /** Word pieces without specials (for tests and debugging). */
  pieces(text: string): string[];
  readonly padId: number;
}

export interface VocabSource {
  vocab: Map<string, number>;
  lowercase: boolean;
  unk: string;
  prefix: string;
}

/** Reads `vocab.txt` or a WordPiece `tokenizer.json`; errors name the file and what is wrong. */
export function readVocab(path: string, lowercase?: boolean): VocabSource {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new MaestroError('CONFIG_INVALID', `Cannot read the tokenizer vocabulary ${path}: ${(err as Error).message}`);
  }
  if (path.endsWith('.json')) {
    let doc: { model?: { type?: string; vocab?: Record<string, number>; unk_token?: string; continuing_subword_prefix?: string }; normalizer?: { type?: string; lowercase?: boolean } | null };
    try {
      doc = JSON.parse(text) as typeof doc;
    } catch {
      // The place only: JSON.parse's message quotes the start of the file, which may be a link to a secret.
      throw new MaestroError('CONFIG_INVALID', notJsonMessage(path, text), { details: { file: path } });
    }
    const model = doc.model;
    if (!model || model.type !== 'WordPiece' || !model.vocab || typeof model.vocab !== 'object') {
      throw new MaestroError('CONFIG_INVALID', `${path}: only WordPiece tokenizers (BERT-style models) are supported; this one is ${JSON.stringify(model?.type ?? 'unknown')}. Point MAESTRO_EMBEDDINGS_VOCAB at a vocab.txt if the model has one.`);
    }
    const vocab = new Map<string, number>();
    for (const [tok, id] of Object.entries(model.vocab)) if (Number.isInteger(id)) vocab.set(tok, id);
    const lc = lowercase ?? (doc.normalizer?.type === 'BertNormalizer' ? doc.normalizer.lowercase !== false : true);
    return { vocab, lowercase: lc, unk: model.unk_token ?? '[UNK]', prefix: model.continuing_subword_prefix ?? '##' };
  }
  if (text.includes('\u0000')) throw new MaestroError('CONFIG_INVALID', `${path} is binary; expected a vocab.txt with one token per line.`);
  const vocab = new Map<string, number>();
  text.split(/\r?\n/).forEach((tok, i) => {
    if (tok !== '' && !vocab.has(tok)) vocab.set(tok, i);
  });
  return { vocab, lowercase: lowercase ?? true, unk: '[UNK]', prefix: '##' };
}

const MAX_WORD_CHARS = 100;

function isCjk(cp: number): boolean {
  return (
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x20000 && cp <= 0x2a6df) ||
    (cp >= 0x2a700 && cp <= 0x2b73f) ||
    (cp >= 0x2b740 && cp <= 0x2b81f) ||
    (cp >= 0x2b820 && cp <= 0x2ceaf) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0x2f800 && cp <= 0x2fa1f)
  );
}

function isPunct(ch: string, cp: number): boolean {
  // BERT treats every ASCII non-letter/number as punctuation, plus Unicode P*.
  if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126)) return true;
  return /\p{P}/u.test(ch);
}

/** The basic tokenizer: words and punctuation marks, before WordPiece. */
export function basicTokens(text: string, lowercase: boolean): string[] {
  let t = '';
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (cp === 0 || cp === 0xfffd || (/\p{Cc}|\p{Cf}/u.test(ch) && !/\s/.test(ch))) continue;
    if (isCjk(cp)) t += ` ${ch} `;
    else t += /\s/.test(ch) ? ' ' : ch;
  }
  const out: string[] = [];
  for (let word of t.split(' ')) {
    if (!word) continue;
    if (lowercase) word = word.toLowerCase().normalize('NFD').replace(/\p{Mn}/gu, '');
    let cur = '';
    for (const ch of word) {
      if (isPunct(ch, ch.codePointAt(0)!)) {
        if (cur) out.push(cur);
        out.push(ch);
        cur = '';
      } else cur += ch;
    }
    if (cur) out.push(cur);
  }
  return out;
}

export function createWordPiece(src: VocabSource): WordPieceTokenizer {
  const { vocab, prefix } = src;
  const need = (tok: string) => {
    const id = vocab.get(tok);
    if (id === undefined) throw new MaestroError('CONFIG_INVALID', `The tokenizer vocabulary has no ${tok} token; is it a BERT WordPiece vocabulary?`);
    return id;
  };
  const unk = need(src.unk);
  const cls = need('[CLS]');
  const sep = need('[SEP]');
  const pad = vocab.get('[PAD]') ?? 0;
  const wordPieces = (word: string): string[] => {
    const chars = [...word];
    if (chars.length > MAX_WORD_CHARS) return [src.unk];
    const out: string[] = [];
    let start = 0;
    while (start < chars.length) {
      let end = chars.length;
      let found: string | null = null;
      while (start < end) {
        const piece = (start > 0 ? prefix : '') + chars.slice(start, end).join('');
        if (vocab.has(piece)) {
          found = piece;
          break;
        }
        end--;
      }
      if (found === null) return [src.unk];
      out.push(found);
      start = end;
    }
    return out;
  };
  const pieces = (text: string) => basicTokens(text, src.lowercase).flatMap(wordPieces);
  return {
    size: vocab.size,
    lowercase: src.lowercase,
    padId: pad,
    pieces,
    encode(text, maxTokens) {
      const body = pieces(text)
        .slice(0, Math.max(0, maxTokens - 2))
        .map((p) => vocab.get(p) ?? unk);
      return [cls, ...body, sep];
    },
  };
}
