/**
 * Secrets already in the wiki: what `maestro wiki lint` reports and `maestro
 * wiki redact` removes. Entries, the log, index.md, notes, audits and session
 * bundles written before the observer redacted secrets (src/core/redact.ts) may
 * still hold them, and `wiki/` is usually committed.
 *
 * The shapes are redactSecrets' own; this module only decides what to apply it
 * to, so that the rewritten file is the old one with each secret replaced by its
 * marker and every other byte kept:
 *   - a `.json` file (bundles, `_index.json`): each JSON string literal is decoded,
 *     redacted and encoded again, so the file stays JSON (the raw text would not:
 *     a value `"abc\"d"` or a PEM cut short inside one string would eat the quote or
 *     the rest of the file). This is redactDeep's view, with keys included.
 *   - any other text file: each frontmatter line (its JSON-quoted values decoded as
 *     above, then the line itself, for `NAME: value` under a key that says secret),
 *     each heading, code fence and table row line, and each run of other lines,
 *     redacted on its own: the fields the writer redacted one by one, so a private
 *     key cut short (no END line) ends at its section, not at the end of the file.
 * A file name is never rewritten: a secret in one is reported, with the path shown
 * redacted, for the person to rename.
 */
import { lstatSync, readdirSync, readFileSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { redactionMarker, redactSecrets, redactSecretsWithSpans } from '../../core/redact.js';
import { splitFrontmatter } from '../../knowledge/format/frontmatter.js';

/** One secret in a file: its 1-based line and its kind (never the value). */
export interface SecretHit {
  line: number;
  kind: string;
}

export interface SecretFile {
  /** The real path (it may itself hold a secret: show `shown`). */
  path: string;
  /** The path with redactSecrets applied, for messages. */
  shown: string;
  hits: SecretHit[];
}

export interface SecretName {
  path: string;
  shown: string;
  kinds: string[];
  isDirectory: boolean;
}

/** The text with its secrets redacted the way described above, and where each was. */
export function redactWikiText(text: string, format: 'json' | 'text'): { text: string; hits: SecretHit[] } {
  const found: Array<{ at: number; kind: string }> = [];
  const parts: string[] = [];
  let done = 0;
  for (const piece of format === 'json' ? [{ start: 0, end: text.length, frontmatter: false }] : textPieces(text)) {
    parts.push(text.slice(done, piece.start));
    const raw = text.slice(piece.start, piece.end);
    if (format === 'json') parts.push(redactLiterals(raw, piece.start, found));
    else if (piece.frontmatter) parts.push(redactFrontmatterLine(raw, piece.start, found));
    else parts.push(redactPlain(raw, piece.start, found));
    done = piece.end;
  }
  parts.push(text.slice(done));
  const starts = lineStarts(text);
  return { text: parts.join(''), hits: found.map((f) => ({ line: lineOf(starts, f.at), kind: f.kind })) };
}

/** Plain text redacted; each secret recorded at `base` + its offset. */
function redactPlain(raw: string, base: number, found: Array<{ at: number; kind: string }>): string {
  const { text, spans } = redactSecretsWithSpans(raw);
  for (const s of spans) found.push({ at: base + s.start, kind: s.kind });
  return text;
}

/**
 * A frontmatter line: its JSON-quoted values first, then the line as a whole for a
 * secret the key names (`DB_PASSWORD: "x"` → `DB_PASSWORD: [redacted: secret]`). That
 * second look sees the values' escapes, not their text, so a match that starts or
 * ends inside a quoted value is not taken (it would cut the quoting: `PASSWORD=\"\"`).
 */
function redactFrontmatterLine(raw: string, base: number, found: Array<{ at: number; kind: string }>): string {
  const line = redactLiterals(raw, base, found);
  const { spans } = redactSecretsWithSpans(line);
  if (!spans.length) return line;
  const literals = [...line.matchAll(LITERAL)].map((m) => [m.index, m.index + m[0].length] as const);
  const inside = (at: number) => literals.some(([start, end]) => start < at && at < end);
  const taken = spans.filter((s) => !inside(s.start) && !inside(s.end));
  let out = line;
  for (const s of [...taken].reverse()) out = `${out.slice(0, s.start)}${redactionMarker(s.kind)}${out.slice(s.end)}`;
  for (const s of taken) found.push({ at: base, kind: s.kind });
  return out;
}

/** A JSON string literal (no raw line break can be in one). */
const LITERAL = /"(?:[^"\\\n]|\\.)*"/g;

function redactLiterals(raw: string, base: number, found: Array<{ at: number; kind: string }>): string {
  return raw.replace(LITERAL, (literal: string, offset: number) => {
    let value: unknown;
    try {
      value = JSON.parse(literal);
    } catch {
      return redactPlain(literal, base + offset, found);
    }
    const { text, spans } = redactSecretsWithSpans(value as string);
    if (!spans.length) return literal;
    for (const s of spans) found.push({ at: base + offset, kind: s.kind });
    return JSON.stringify(text);
  });
}

/** Lines that are a field of their own in the wiki's markdown: headings (log entries too), code fences, table rows (index.md). */
const OWN_PIECE = /^(?:#{1,6}\s|```|~~~|\|)/;

/** The text's pieces, each without its final line break; what lies between pieces is kept as it is. */
function textPieces(text: string): Array<{ start: number; end: number; frontmatter: boolean }> {
  const block = splitFrontmatter(text);
  const frontLines = new Set(block.closed ? block.lines.map((l) => l.line) : []);
  const pieces: Array<{ start: number; end: number; frontmatter: boolean }> = [];
  let run: { start: number; end: number } | null = null;
  const flush = () => {
    if (run) pieces.push({ ...run, frontmatter: false });
    run = null;
  };
  let start = 0;
  for (let line = 1; start <= text.length; line++) {
    const nl = text.indexOf('\n', start);
    const end = nl === -1 ? text.length : nl;
    const body = text.slice(start, end);
    if (frontLines.has(line) || OWN_PIECE.test(body) || line <= block.lineCount) {
      flush();
      if (end > start) pieces.push({ start, end, frontmatter: frontLines.has(line) });
    } else if (body.trim()) {
      // Blank lines inside a run belong to it; before and after it they are kept as they are.
      if (run) run.end = end;
      else run = { start, end };
    }
    if (nl === -1) break;
    start = nl + 1;
  }
  flush();
  return pieces;
}

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

function lineOf(starts: readonly number[], at: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= at) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

/** A write in flight (the atomic write's `.<name>.<pid>.<random>.tmp`): its writer renames it over the target, so it is never ours to touch. */
const IN_FLIGHT = /^\..+\.tmp$/;

/**
 * Every regular file under the wiki root, and every name under it that holds a
 * secret. Links are not followed (one may point out of the wiki), `.git` is
 * skipped, and so are writes in flight.
 */
export function walkWiki(wikiRoot: string): { files: string[]; names: SecretName[] } {
  const files: string[] = [];
  const names: SecretName[] = [];
  const walk = (dir: string): void => {
    let entries: string[];
    try {
      entries = readdirSync(dir).sort();
    } catch {
      return;
    }
    for (const name of entries) {
      if (name === '.git' || IN_FLIGHT.test(name)) continue;
      const path = join(dir, name);
      let stat: Stats;
      try {
        stat = lstatSync(path);
      } catch {
        continue; // removed while walking
      }
      const kinds = redactSecretsWithSpans(name).spans.map((s) => s.kind);
      if (kinds.length) names.push({ path, shown: redactSecrets(path), kinds, isDirectory: stat.isDirectory() });
      if (stat.isDirectory()) walk(path);
      else if (stat.isFile()) files.push(path);
    }
  };
  walk(wikiRoot);
  return { files, names };
}

/**
 * A file's text when it is text we can write back byte for byte (UTF-8, no NUL);
 * null for anything else (an image under outputs/, a file that is not UTF-8).
 */
export function readWikiText(path: string): string | null {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch {
    return null;
  }
  if (bytes.includes(0)) return null;
  const text = bytes.toString('utf8');
  return Buffer.from(text).equals(bytes) ? text : null;
}

export function wikiFormat(path: string): 'json' | 'text' {
  return path.endsWith('.json') ? 'json' : 'text';
}

/** What `wiki lint` reports: each file that holds a secret (with its lines and kinds), and each name that does. */
export function scanWikiSecrets(wikiRoot: string): { files: SecretFile[]; names: SecretName[] } {
  const { files, names } = walkWiki(wikiRoot);
  const out: SecretFile[] = [];
  for (const path of files) {
    const text = readWikiText(path);
    if (text === null) continue;
    const { hits } = redactWikiText(text, wikiFormat(path));
    if (hits.length) out.push({ path, shown: redactSecrets(path), hits });
  }
  return { files: out, names };
}
