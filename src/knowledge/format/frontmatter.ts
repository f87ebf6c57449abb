/**
 * The one frontmatter reader (FORMATS §1.3, §2.3, §3.4, §8.4–8.5). Every file
 * with a `---` block goes through `splitFrontmatter` (BOM, leading blank
 * lines, CRLF, the closing `---`, file line numbers) and one value reader.
 *
 * The value reader is deliberately not full YAML, to read exactly what the
 * other tools write: `key: value` lines, quoted or bare scalars, inline
 * `[a, b]` lists, values starting `[`/`{` tried as JSON, `key:` followed by
 * `- item` lines (a list) or by indented `k: v` lines (one nested map). The
 * formats differ in what a value means, so the reader takes a dialect:
 *
 * | dialect        | files                                   | `1`, `0.5`  | `null`, `~` | `key:` with nothing under | `- k: v` item                  | body line endings |
 * | `maestro-flow` | `.workflow/` specs and knowhow (default) | string      | string      | `[]`                      | the string `k: v`               | as in the file     |
 * | `wiki`         | GUI-Anything's wiki entries, audits      | number      | null        | null                      | a map, continued by deeper `k: v` | LF               |
 * | `yaml`         | `report.md` (maestro-flow parses it with the `yaml` package) | full YAML through that package, loaded on first use | | | | as in the file |
 *
 * The reader never throws: problems come back with their 1-based file line,
 * and the rest of the block is still read, so one bad line cannot hide a file.
 * A value that opens a list or map it does not finish (`[a, b` with no `]`, a
 * `{…}` that is not JSON) is read as its text, as maestro-flow's reader does,
 * and is a problem too: the person meant a list or a map. Whether a key's value
 * has the type its format expects is the format's check (frontmatterFields.ts),
 * with the key's line from `keyLines`.
 * Writers change a block through frontmatterEdit.ts, which keeps every line
 * an edit does not set (comments, blank lines, unknown keys).
 */
import { yaml, yamlErrorWhere } from '../../lib/yaml.js';
import { MaestroError } from '../../core/errors.js';

export type FrontValue = string | number | boolean | null | FrontValue[] | { [k: string]: FrontValue };
export type FrontMatter = Record<string, FrontValue>;
export type Dialect = 'maestro-flow' | 'wiki' | 'yaml';

export interface FrontmatterProblem {
  /** 1-based line in the file. */
  line: number;
  message: string;
}

export interface FrontBlock {
  /** An opening `---` line was found (after an optional BOM and leading whitespace). */
  opened: boolean;
  /** ...and a closing `---` line after it. */
  closed: boolean;
  /** The lines between the two `---` lines, without line endings, with their 1-based file line. */
  lines: Array<{ text: string; line: number }>;
  /** The text after the closing line's newline (the whole text when no block is closed), line endings untouched. */
  body: string;
  /** 1-based line where the body starts. */
  bodyLine: number;
  /** Lines taken by the block, including both `---` lines (0 if none). */
  lineCount: number;
  problems: FrontmatterProblem[];
}

export interface Frontmatter {
  data: FrontMatter;
  body: string;
  bodyLine: number;
  lineCount: number;
  problems: FrontmatterProblem[];
  /** Each top-level key's 1-based file line (the last line giving it, whose value the reader keeps). */
  keyLines: Record<string, number>;
  /** A complete block (opening and closing `---`) was found. */
  present: boolean;
  /** An opening `---` was found, closed or not. */
  opened: boolean;
}

const FENCE = /^---[ \t]*$/;

/** Finds and splits the `---` block. The one place that knows where frontmatter starts and ends. */
export function splitFrontmatter(text: string): FrontBlock {
  const none: FrontBlock = { opened: false, closed: false, lines: [], body: text, bodyLine: 1, lineCount: 0, problems: [] };
  // trimStart also drops a BOM (U+FEFF is white space to it), as the other tools' readers do.
  const lead = text.length - text.trimStart().length;
  const leadLines = text.slice(0, lead).split('\n').length - 1;
  const all = text.slice(lead).split('\n');
  if (!FENCE.test(all[0]!.replace(/\r$/, ''))) return none;
  const openLine = leadLines + 1;
  const close = all.findIndex((l, i) => i > 0 && FENCE.test(l.replace(/\r$/, '')));
  if (close === -1) {
    return { ...none, opened: true, problems: [{ line: openLine, message: `frontmatter opened with --- on line ${openLine} is never closed (no --- line after it)` }] };
  }
  const lines = all.slice(1, close).map((l, i) => ({ text: l.replace(/\r$/, ''), line: openLine + 1 + i }));
  const consumed = all.slice(0, close + 1).join('\n').length + 1;
  return { opened: true, closed: true, lines, body: text.slice(lead + consumed), bodyLine: openLine + close + 1, lineCount: leadLines + close + 1, problems: [] };
}

/** FORMATS §1.3 "has frontmatter": a closed `---` block opens the file. */
export function hasFrontmatter(text: string): boolean {
  return splitFrontmatter(text).closed;
}

export function parseFrontmatter(text: string, opts: { dialect?: Dialect } = {}): Frontmatter {
  const dialect = opts.dialect ?? 'maestro-flow';
  const block = splitFrontmatter(text);
  const read = !block.closed ? { data: {}, problems: [], keyLines: {} } : dialect === 'yaml' ? { ...readYaml(block.lines), keyLines: {} } : readLines(block.lines, dialect === 'wiki');
  return {
    data: read.data,
    body: dialect === 'wiki' ? block.body.replace(/\r\n/g, '\n') : block.body,
    bodyLine: block.bodyLine,
    lineCount: block.lineCount,
    problems: [...block.problems, ...read.problems],
    keyLines: read.keyLines,
    present: block.closed,
    opened: block.opened,
  };
}

function unquote(v: string): string {
  if (v.length < 2) return v;
  if (v.startsWith('"') && v.endsWith('"')) {
    try {
      return JSON.parse(v) as string;
    } catch {
      return v.slice(1, -1);
    }
  }
  if (v.startsWith("'") && v.endsWith("'")) return v.slice(1, -1).replace(/''/g, "'");
  return v;
}

/** False when `v` (starting with [ or {) cannot be JSON: its first value character is one no JSON value starts with. */
function mayBeJson(v: string): boolean {
  let i = 1;
  while (i < v.length && (v[i] === ' ' || v[i] === '\t')) i++;
  const c = v[i];
  if (c === undefined) return true;
  if (v[0] === '{') return c === '"' || c === '}';
  if (c === 't' || c === 'f' || c === 'n') {
    // Only the literals true, false and null start with these, followed by a delimiter.
    const word = c === 't' ? 'true' : c === 'f' ? 'false' : 'null';
    const next = v[i + word.length];
    return v.startsWith(word, i) && (next === undefined || next === ',' || next === ']' || next === ' ' || next === '\t');
  }
  return c === '"' || c === '[' || c === '{' || c === ']' || c === '-' || (c >= '0' && c <= '9');
}

/** One scalar. `typed` (wiki): numbers and null/~ too; maestro-flow keeps those as strings. */
function scalar(raw: string, typed: boolean): FrontValue {
  const v = raw.trim();
  if (v === '') return '';
  if (v.startsWith('[') || v.startsWith('{')) {
    // A flow list of bare words (`[a, b]`, the usual tags line) is not JSON: the parse is skipped
    // rather than left to throw (a thrown error costs more than the rest of the file).
    if (mayBeJson(v)) {
      try {
        return JSON.parse(v) as FrontValue;
      } catch {
        // not JSON: read below
      }
    }
    if (v.startsWith('[') && v.endsWith(']')) {
      return v
        .slice(1, -1)
        .split(',')
        .map((s) => (typed ? scalar(s, true) : unquote(s.trim())))
        .filter((s) => s !== '');
    }
  }
  if (v === 'true') return true;
  if (v === 'false') return false;
  if (typed && (v === 'null' || v === '~')) return null;
  if (typed && /^-?\d+(\.\d+)?$/.test(v)) return Number(v);
  return unquote(v);
}

export const TOP = /^([\w.-]+)\s*:\s*(.*)$/;
const INDENTED = /^\s+([\w.-]+)\s*:\s*(.*)$/;
const ITEM = /^\s*-\s*(.*)$/;
/** A wiki list item that starts a map: `- key: value` (a space after the colon, so `- proj:app` stays a string). */
const ITEM_KEY = /^([A-Za-z_][\w-]*):(?:\s+(.*))?$/;

/**
 * What is wrong with a value read as text although it opens a list or a map (module comment), or null.
 * `[WIP] title` closes its `[`: that is text someone meant, and is not reported.
 */
function unfinishedValue(raw: string, read: FrontValue): string | null {
  const v = raw.trim();
  if (typeof read !== 'string' || (v[0] !== '[' && v[0] !== '{')) return null;
  const shown = JSON.stringify(v.length > 60 ? `${v.slice(0, 60)}…` : v);
  if (v[0] === '{') return `the value ${shown} opens a map with "{" but is not JSON; it is read as that text (quote it if text is meant)`;
  return v.includes(']') ? null : `the value ${shown} opens a list with "[" but never closes it; it is read as that text (quote it if text is meant)`;
}

/** The block's `key: value` lines (module comment); `wiki` selects that dialect's meanings. */
export function readLines(lines: FrontBlock['lines'], wiki: boolean): { data: FrontMatter; problems: FrontmatterProblem[]; keyLines: Record<string, number> } {
  const data: FrontMatter = {};
  const problems: FrontmatterProblem[] = [];
  const keyLines: Record<string, number> = {};
  /** The value of `key` on `line`, with a problem when it is an unfinished list or map. */
  const value = (raw: string, key: string, line: number, typed: boolean): FrontValue => {
    const read = scalar(raw, typed);
    const why = unfinishedValue(raw, read);
    if (why) problems.push({ line, message: `${key}: ${why}` });
    return read;
  };
  // The key whose value is still open: `key:` (a list or a map, decided by the first line under it) or `key: []`.
  let open: { key: string; kind: 'pending' | 'list' | 'map' } | null = null;
  let itemMap: Record<string, FrontValue> | null = null;
  const bad = (line: number, text: string, why: string) => problems.push({ line, message: `unreadable frontmatter line ${JSON.stringify(text.slice(0, 80))}: ${why}` });
  const settle = () => {
    if (open?.kind === 'pending') data[open.key] = wiki ? null : [];
    open = null;
    itemMap = null;
  };
  for (const { text, line } of lines) {
    if (text.trim() === '' || text.trimStart().startsWith('#')) continue;
    const item = ITEM.exec(text);
    if (item && open && open.kind !== 'map') {
      const list = open.kind === 'list' ? (data[open.key] as FrontValue[]) : (data[open.key] = []);
      open.kind = 'list';
      const kv = wiki && !item[1]!.startsWith('"') ? ITEM_KEY.exec(item[1]!) : null;
      itemMap = kv ? { [kv[1]!]: value(kv[2] ?? '', `${open.key}.${kv[1]!}`, line, true) } : null;
      list.push(itemMap ?? value(item[1]!, open.key, line, wiki));
      continue;
    }
    const nested = INDENTED.exec(text);
    if (nested && itemMap) {
      itemMap[nested[1]!] = value(nested[2]!, `${open!.key}.${nested[1]!}`, line, wiki);
      continue;
    }
    if (nested && open && open.kind !== 'list') {
      const map = open.kind === 'map' ? (data[open.key] as Record<string, FrontValue>) : (data[open.key] = {});
      open.kind = 'map';
      map[nested[1]!] = value(nested[2]!, `${open.key}.${nested[1]!}`, line, wiki);
      continue;
    }
    const kv = /^\s/.test(text) ? null : TOP.exec(text);
    settle();
    if (!kv) {
      bad(line, text, /^\s/.test(text) ? 'an indented line with no open key above it' : 'expected "key: value"');
      continue;
    }
    const rest = kv[2]!.trim();
    keyLines[kv[1]!] = line;
    if (rest === '' || rest === '[]') {
      open = { key: kv[1]!, kind: rest === '' ? 'pending' : 'list' };
      if (rest === '[]') data[kv[1]!] = [];
      continue;
    }
    data[kv[1]!] = value(rest, kv[1]!, line, wiki);
  }
  settle();
  return { data, problems, keyLines };
}

/**
 * The longest block the full YAML reader takes. `report.md` is an agent's (the executor moves it out of the
 * worktree) and a knowledge review reads every run's report in the daemon; the package takes about 7 µs a
 * character of short items: a 1.2 MB block held the event loop 4 s, this many characters under half a second.
 */
export const MAX_YAML_BLOCK_CHARS = 64 * 1024;

/** Full YAML through the `yaml` package (loaded on first use: only `report.md` needs it). */
function readYaml(lines: FrontBlock['lines']): { data: FrontMatter; problems: FrontmatterProblem[] } {
  const text = lines.map((l) => l.text).join('\n');
  const first = lines[0]?.line ?? 1;
  if (text.length > MAX_YAML_BLOCK_CHARS) {
    return { data: {}, problems: [{ line: first, message: `frontmatter is ${text.length.toLocaleString('en-US')} characters, more than the ${MAX_YAML_BLOCK_CHARS.toLocaleString('en-US')} it may hold; it was not read` }] };
  }
  const { LineCounter, parseDocument } = yaml();
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, prettyErrors: false });
  // The place only (the problem's line, and the column): the package's message quotes a token of the text.
  if (doc.errors.length) {
    return { data: {}, problems: doc.errors.map((e) => ({ line: first + counter.linePos(e.pos[0]).line - 1, message: `frontmatter is not valid YAML (column ${counter.linePos(e.pos[0]).col})` })) };
  }
  let value: unknown;
  try {
    value = doc.toJS();
  } catch (err) {
    // An alias bomb parses cleanly and is refused only here (ReferenceError "Excessive alias count…", no position):
    // a problem on the block's first line, so the never-throws contract holds.
    return { data: {}, problems: [{ line: first, message: `frontmatter YAML cannot be loaded: ${yamlErrorWhere(err)}` }] };
  }
  // A block that is not a map (empty, a bare string) has no keys, as maestro-flow reads it.
  return { data: value && typeof value === 'object' && !Array.isArray(value) ? (value as FrontMatter) : {}, problems: [] };
}

/**
 * For a writer about to call `setFrontmatterLine` on a file: refuses one whose frontmatter opens with `---`
 * but never closes (CORRUPT_FILE, naming `file` and the opening line). Where its keys end would be a guess,
 * and `setFrontmatterLine` would put a second block on top, turning the old keys into body text.
 * `what` names the file's kind in the message (knowhow, audit).
 */
export function assertFrontmatterClosed(text: string, file: string, what: string): void {
  const block = splitFrontmatter(text);
  if (!block.opened || block.closed) return;
  const [p] = block.problems;
  throw new MaestroError('CORRUPT_FILE', `Cannot change ${what} ${file}:${p?.line ?? 1}: ${p?.message ?? 'frontmatter is never closed'}. Add the closing --- line by hand; nothing was written.`, { details: { file, line: p?.line ?? 1 } });
}

/** FORMATS §2.3 `escapeYamlValue`: JSON-quoted when the value holds any of `: \n " ' # , { } [ ]`. */
export function escapeYamlValue(value: string): string {
  return /[:\n"'#,{}[\]]/.test(value) ? JSON.stringify(value) : value;
}

export function asString(v: FrontValue | undefined): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return undefined;
}

/** Lists may come as arrays, inline `[a, b]`, or comma strings (readers accept all, FORMATS §2.4). */
export function asList(v: FrontValue | undefined): string[] {
  if (v === undefined || v === null || v === '') return [];
  if (Array.isArray(v)) return v.map((x) => String(x).trim()).filter((x) => x !== '');
  if (typeof v === 'string') return v.split(',').map((x) => x.trim()).filter((x) => x !== '');
  return [];
}
