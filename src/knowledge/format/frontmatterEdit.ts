/**
 * Writing frontmatter: a new block rendered in the wiki writer's style (FORMATS §8.4), or an existing one edited
 * in place. A top-level `key:` line's value runs over the lines under it (indented lines and `- ` items); a comment
 * or blank line belongs to it only when more of the value follows. Whatever an edit does not set is left as it
 * was, byte for byte, line endings included: nothing a person wrote is lost.
 */
import { isDeepStrictEqual } from 'node:util';
import { readLines, splitFrontmatter, TOP, type FrontValue } from './frontmatter.js';
import { lineEnding, withLineEnding } from './text.js';

const isNote = (l: string) => l.trim() === '' || l.trimStart().startsWith('#');

/** The index after the last line of the value whose `key:` line is at `at`. */
function valueEnd(lines: readonly string[], at: number, close: number): number {
  let end = at + 1;
  for (let i = at + 1; i < close; i++) {
    if (isNote(lines[i]!)) continue;
    if (!/^(\s|-(\s|$))/.test(lines[i]!)) break;
    end = i + 1;
  }
  return end;
}

/** The key's top-level line between `open` and `close` (file line indexes): the last one, whose value the reader keeps. */
function keyLine(lines: readonly string[], key: string, open: number, close: number): number {
  for (let i = close - 1; i > open; i--) if (TOP.exec(lines[i]!.replace(/\r$/, ''))?.[1] === key) return i;
  return -1;
}

/** Replaces a key and its old value (lines `at`..`end`) by `fresh`; comment and blank lines inside the old value stay, just above it. */
function replaceValue(lines: string[], at: number, end: number, fresh: readonly string[]): number {
  const kept = lines.slice(at + 1, end).filter(isNote);
  lines.splice(at, end - at, ...kept, ...fresh);
  return kept.length + fresh.length - (end - at);
}

/**
 * Sets `key: <rendered>` in the block in place (replacing the lines of its old value),
 * or inserts it (`at`: before the closing `---`, or right after the opening one); every other line
 * is left as it is. A file without frontmatter gets a block; one whose block is never
 * closed would get a second one on top, so writers check `assertFrontmatterClosed` first.
 */
export function setFrontmatterLine(text: string, key: string, rendered: string, at: 'end' | 'start' = 'end'): string {
  const line = `${key}: ${rendered}`;
  const block = splitFrontmatter(text);
  if (!block.closed) return `${withLineEnding(`---\n${line}\n---\n\n`, lineEnding(text))}${text}`;
  const lines = text.split('\n');
  const close = block.bodyLine - 2; // 0-based index of the closing ---
  const open = close - block.lines.length - 1;
  const cr = lines[open]!.endsWith('\r') ? '\r' : '';
  const found = keyLine(lines, key, open, close);
  if (found !== -1) replaceValue(lines, found, valueEnd(lines, found, close), [line + cr]);
  else lines.splice(at === 'end' ? close : open + 1, 0, line + cr);
  return lines.join('\n');
}

/** `head`: the text through the closing `---` line and its line break; `body`: the rest, untouched; `eol`: the block's line break (its opening line's). */
export interface FrontmatterEdit { head: string; body: string; eol: '\n' | '\r\n' }

/**
 * Sets `changes` in a wiki entry's block (FORMATS §8.4), keeping every line they do not change. A key whose value
 * is unchanged, as the wiki dialect reads it, keeps its text byte for byte; a changed one is written again where it
 * stood, in the wiki writer's style, except that a block list the new list extends keeps its lines and gets the new
 * items after them (tags and sources only grow); a new key goes at the end of the block; `undefined` changes nothing.
 * A text without a closed block gets one on top: writers refuse an unclosed one first, as for `setFrontmatterLine`.
 */
export function editFrontmatter(text: string, changes: Record<string, FrontValue | undefined>): FrontmatterEdit {
  const block = splitFrontmatter(text);
  const set = Object.entries(changes).filter((e): e is [string, FrontValue] => e[1] !== undefined);
  if (!block.closed) {
    const eol = lineEnding(text);
    return { head: ['---', ...set.flatMap(([k, v]) => renderKey(k, v)), '---', ''].join(eol), body: text, eol };
  }
  const head = text.slice(0, text.length - block.body.length);
  const lines = head.replace(/\n$/, '').split('\n');
  let close = lines.length - 1;
  const open = close - block.lines.length - 1;
  const cr = lines[open]!.endsWith('\r') ? '\r' : '';
  const current = readLines(block.lines, true).data;
  const added: string[] = [];
  for (const [key, value] of set) {
    if (isDeepStrictEqual(current[key], value)) continue;
    const at = keyLine(lines, key, open, close);
    if (at === -1) {
      added.push(...renderKey(key, value));
      continue;
    }
    const end = valueEnd(lines, at, close);
    const items = addedItems(lines.slice(at, end), current[key], value);
    if (items) {
      lines.splice(end, 0, ...items.map((l) => l + cr));
      close += items.length;
    } else close += replaceValue(lines, at, end, renderKey(key, value).map((l) => l + cr));
  }
  lines.splice(close, 0, ...added.map((l) => l + cr));
  return { head: `${lines.join('\n')}${head.endsWith('\n') ? '' : cr}\n`, body: block.body, eol: cr ? '\r\n' : '\n' };
}

/** The lines of the items `value` adds to `old`, indented like the old ones, when `old` is a block list `value` extends; else null. */
function addedItems(span: readonly string[], old: FrontValue | undefined, value: FrontValue): string[] | null {
  if (!Array.isArray(old) || !Array.isArray(value) || !old.length || value.length <= old.length) return null;
  if (!isDeepStrictEqual(value.slice(0, old.length), old)) return null;
  const dash = span.map((l) => /^(\s*)-(\s|$)/.exec(l)).find(Boolean);
  return dash ? renderItems(value.slice(old.length), dash[1]!) : null;
}

/* The wiki writer (FORMATS §8.4): strings JSON-quoted, lists as block lists, one level of nested map. */
function renderScalar(v: FrontValue): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (v === null) return 'null';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(JSON.stringify(v));
}

/** List items at `indent`; a map item as `- k: v` and its further keys under it. */
function renderItems(items: readonly FrontValue[], indent: string): string[] {
  return items.flatMap((item) =>
    item && typeof item === 'object' && !Array.isArray(item)
      ? Object.entries(item).map(([k, v], i) => `${indent}${i === 0 ? '- ' : '  '}${k}: ${renderScalar(v)}`)
      : [`${indent}- ${renderScalar(item)}`],
  );
}

function renderKey(key: string, value: FrontValue): string[] {
  if (Array.isArray(value)) return value.length ? [`${key}:`, ...renderItems(value, '  ')] : [`${key}: []`];
  if (value && typeof value === 'object') return [`${key}:`, ...Object.entries(value).map(([k, v]) => `  ${k}: ${renderScalar(v)}`)];
  return [`${key}: ${renderScalar(value)}`];
}

/** Renders keys in insertion order; `undefined` values are left out. */
export function renderFrontmatter(data: Record<string, FrontValue | undefined>): string {
  return ['---', ...Object.entries(data).flatMap(([key, value]) => (value === undefined ? [] : renderKey(key, value))), '---'].join('\n');
}
