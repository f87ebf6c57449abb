/**
 * File names as git prints them, kept as bytes: a name that is not UTF-8 (`n\377.txt`) read as text was one name
 * with another, so each showed both files' lines. A name is told apart by its bytes (`key`), shown as git quotes it,
 * and named to git by a glob when it is not UTF-8 (an argument cannot hold its bytes).
 */
import { isUtf8 } from 'node:buffer';

/** A file's name: `key` its bytes one char each (files are told apart by it), `shown` what the person reads. */
export type GitName = { key: string; shown: string; bytes: Buffer };

const ESCAPES: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };

/** The bytes of a path as git prints it: bare, or C-quoted ("a/tab\there", octal bytes) when it holds odd characters. */
export function pathBytes(text: string): Buffer {
  if (!text.startsWith('"')) return Buffer.from(text, 'utf8');
  // In order: octal bytes (\377), named escapes (\t, \"), runs of characters as they are.
  const parts = text.slice(1, -1).match(/\\[0-7]{3}|\\.|[^\\]+/gs) ?? [];
  return Buffer.concat(parts.map((p) => (p[0] !== '\\' ? Buffer.from(p, 'utf8') : Buffer.from([/[0-7]/.test(p[1]!) ? parseInt(p.slice(1), 8) : (ESCAPES[p[1]!] ?? p.charCodeAt(1))]))));
}

/** A name that is not UTF-8 is shown as git quotes it ("n\377.txt"), so that it reads as odd and stays apart from others. */
export function gitName(bytes: Buffer): GitName {
  if (isUtf8(bytes)) return { key: bytes.toString('latin1'), shown: bytes.toString('utf8'), bytes };
  const named = Object.fromEntries(Object.entries(ESCAPES).map(([c, b]) => [b, c]));
  let shown = '';
  for (const b of bytes) shown += named[b] ? `\\${named[b]}` : b < 0x20 || b >= 0x7f ? `\\${b.toString(8).padStart(3, '0')}` : String.fromCharCode(b);
  return { key: bytes.toString('latin1'), shown: `"${shown}"`, bytes };
}

/**
 * A name from a `-z` listing git was asked to print as bytes (`encoding: 'latin1'`, one char each), as a person reads
 * it: gitName's `shown`. Read as UTF-8 instead, every byte that is not UTF-8 became U+FFFD, and two names looked one.
 */
export const shownName = (key: string): string => gitName(Buffer.from(key, 'latin1')).shown;

/** The names in `git status --porcelain=v1 -z`: each entry `XY name`, a rename or a copy followed by the name it had. */
export function statusNames(stdout: string): string[] {
  const fields = stdout.split('\0');
  const names: string[] = [];
  for (let i = 0; i < fields.length; i++) {
    const entry = fields[i]!;
    if (!entry) continue;
    names.push(entry.slice(3));
    if (/[RC]/.test(entry.slice(0, 2)) && fields[i + 1]) names.push(fields[++i]!);
  }
  return names;
}

/** A path from a patch's ---/+++ or `diff --git` line, without its `a/` or `b/`. */
export function sideName(text: string): GitName {
  // git ends a ---/+++ name holding a space with a tab (for patch(1)); a quoted name has none.
  const bytes = pathBytes(text.replace(/\t$/, ''));
  return gitName(bytes.length > 1 && (bytes[0] === 0x61 || bytes[0] === 0x62) && bytes[1] === 0x2f ? bytes.subarray(2) : bytes);
}

/**
 * A glob for a name that is not UTF-8 (an argument cannot hold its bytes): its characters as they are, `?` for each
 * byte that is part of none; and, as a regex over keys, the names it takes in (git's wildmatch goes by bytes).
 */
function globOf(bytes: Buffer): { glob: string; rx: RegExp } {
  let glob = '';
  let rx = '';
  for (let i = 0; i < bytes.length; ) {
    const lead = bytes[i]!;
    const len = lead < 0x80 ? 1 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 0;
    const char = len ? bytes.subarray(i, i + len) : null;
    if (char && char.length === len && isUtf8(char)) {
      glob += char.toString('utf8').replace(/[*?[\\]/, '\\$&');
      rx += char.toString('latin1').replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      i += len;
    } else {
      glob += '?';
      rx += '[^/]';
      i += 1;
    }
  }
  return { glob, rx: new RegExp(`^${rx}(?:/.*)?$`, 's') };
}

/** The pathspec naming `name` (`magic`: more of it, "exclude,"), and which files (by key) it takes in: itself, what lies under it, and for a glob (globOf) the names it also matches. */
export function pathspecOf(name: GitName, magic: string): { spec: string; takes: (key: string) => boolean } {
  if (isUtf8(name.bytes)) return { spec: `:(${magic}literal)${name.shown}`, takes: (k) => k === name.key || k.startsWith(`${name.key}/`) };
  const { glob, rx } = globOf(name.bytes);
  return { spec: `:(${magic}glob)${glob}`, takes: (k) => rx.test(k) };
}

/**
 * Every name with a byte outside printable ASCII (a tab, a newline, a letter past ASCII), in any folder. A whole
 * listing names the files it cannot name one by one (not UTF-8) with these: a glob each cost a regex per file and
 * name, and 20,000 such names took 59 s.
 */
const UNPRINTABLE_GLOBS = ['**/*[! -~]*', '**/*[! -~]*/**'];

export const unprintable = (n: GitName) => /[^ -~]/.test(n.key);

/** Pathspecs for `names` in a whole listing: each UTF-8 name by itself, the others all at once (UNPRINTABLE_GLOBS). */
export function listingSpecs(names: GitName[], magic: string): string[] {
  const odd = names.some((n) => !isUtf8(n.bytes)) ? UNPRINTABLE_GLOBS.map((g) => `:(${magic}glob)${g}`) : [];
  return [...names.filter((n) => isUtf8(n.bytes)).map((n) => pathspecOf(n, magic).spec), ...odd];
}
