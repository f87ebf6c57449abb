/**
 * THE spec parser (seed 000 §3.1: one canonical parser; FORMATS §1.3–1.5).
 * Everything that reads spec files — the index, `load`, `spec health`, the
 * keyword index for prompt injection, the graph — goes through
 * `parseSpecText`. It never throws on bad input: problems come back as
 * findings with a line, and every well-formed entry is still returned.
 * A CRLF file parses as its LF twin: entry content, attribute values and
 * legacy bodies read each `\r\n` as `\n` (lines are still counted by `\n`).
 */
import { asList, asString, parseFrontmatter, type Frontmatter } from './frontmatter.js';
import { frontmatterProblems, SPEC_FIELDS } from './frontmatterFields.js';
import { BINARY_CONTENT, binaryContentLine, lfText, lineIndex } from './text.js';

export const VALID_CATEGORIES = ['coding', 'arch', 'debug', 'test', 'review', 'learning', 'ui'] as const;
export type SpecCategory = (typeof VALID_CATEGORIES)[number];

/** FORMATS §1.4: the `confidence` values readers keep; any other value reads back as none. */
export const CONFIDENCE_LEVELS = ['high', 'medium', 'low', 'contested'] as const;
export type SpecConfidence = (typeof CONFIDENCE_LEVELS)[number];

/** FORMATS §1.2 `CATEGORY_MAP`; insertion order matters (first match is the append target). */
export const CATEGORY_MAP: ReadonlyArray<readonly [string, SpecCategory]> = [
  ['coding-conventions.md', 'coding'],
  ['architecture-constraints.md', 'arch'],
  ['debug-notes.md', 'debug'],
  ['test-conventions.md', 'test'],
  ['review-standards.md', 'review'],
  ['quality-rules.md', 'review'],
  ['learnings.md', 'learning'],
  ['ui-conventions.md', 'ui'],
];

/** Content longer than this goes to a knowhow DOC file (FORMATS §1.4 `MAX_SPEC_ENTRY_SIZE`). */
export const MAX_SPEC_ENTRY_SIZE = 2048;
/** A spec file larger than this is reported and not parsed (a 10 MB file must not stall indexing). */
export const MAX_SPEC_FILE_BYTES = 2 * 1024 * 1024;

export interface Finding {
  file: string;
  line: number;
  severity: 'error' | 'warning';
  code: string;
  message: string;
}

export interface SpecEntry {
  /** `tag` for `<spec-entry>` blocks, `legacy` for `### [date] Title` headings. */
  form: 'tag' | 'legacy';
  /** 1-based ordinal within the file: tag blocks first (deprecated included), then legacy (FORMATS §1.6). */
  ordinal: number;
  /** 1-based line of the opening tag / heading in the whole file. */
  lineStart: number;
  lineEnd: number;
  /** Raw attribute values as written (never unescaped, FORMATS §1.4); a line break in one reads as `\n`. */
  attrs: Record<string, string>;
  category: string | undefined;
  keywords: string[];
  date: string | undefined;
  sid: string | undefined;
  title: string;
  description: string | undefined;
  source: string | undefined;
  ref: string | undefined;
  confidence: SpecConfidence | undefined;
  status: 'active' | 'deprecated';
  supersedes: string[];
  supersededBy: string | undefined;
  content: string;
  errors: string[];
}

export interface ParsedSpecFile {
  file: string;
  frontmatter: Frontmatter;
  /** Category of the file: CATEGORY_MAP, then frontmatter, then a stem that is itself a category. */
  category: SpecCategory | undefined;
  entries: SpecEntry[];
  findings: Finding[];
}

/**
 * The block grammar is maestro-flow's (src/tools/spec-entry-parser.ts `SPEC_ENTRY_RE`, `ATTR_RE`; the
 * dashboard's wiki/spec-entry-parser.ts uses the same two): the opening tag ends at the FIRST `>`, quotes
 * or not, and an attribute is `name="value"`. A raw `>` inside a quoted value therefore cuts the tag there
 * for both tools; reading it any other way would give the two tools different attributes (a `status` after
 * the cut is deprecated for one and active for the other). Writers escape `>` as `&gt;`; a file that holds a
 * raw one gets a finding, and the writers refuse to edit that entry (specWriter.ts `upsertTagAttributes`).
 */
const BLOCK_RE = /<spec-entry\s+([^>]+)>([\s\S]*?)<\/spec-entry>/g;
export const ATTR_RE = /([\w-]+)="([^"]*)"/g;

/** Findings that leave an entry's opening tag or extent uncertain: writers refuse to rewrite such an entry. */
export const UNSAFE_TO_EDIT: ReadonlySet<string> = new Set(['bad-attribute', 'unbalanced-tag']);
/** Findings that leave a file's block structure uncertain: nothing is appended to such a file. */
export const UNSAFE_TO_APPEND: ReadonlySet<string> = new Set(['unbalanced-tag', 'binary-content', 'file-too-large']);

export interface SpecBlock {
  /** Offsets of the whole block `<spec-entry …>…</spec-entry>` in the text. */
  start: number;
  end: number;
  /** Length of the opening tag, `<spec-entry` through its `>`. */
  openLength: number;
  attrText: string;
  body: string;
}

/** The `<spec-entry>` blocks in document order, as maestro-flow segments them. The parser and the writers both use this. */
export function specBlocks(text: string): SpecBlock[] {
  return [...text.matchAll(BLOCK_RE)].map((m) => ({
    start: m.index!,
    end: m.index! + m[0].length,
    // `[^>]+` holds no `>`, so the first one in the match closes the opening tag.
    openLength: m[0].indexOf('>') + 1,
    attrText: m[1]!,
    body: m[2]!,
  }));
}
const LEGACY_HEADING_RE = /^###\s+(?:\[[\w-]+\]\s+)?\[(\d{4}-\d{2}-\d{2}(?:\s[\d:]+)?)\]\s*(.+)$/;

export function isConfidence(v: unknown): v is SpecConfidence {
  return typeof v === 'string' && (CONFIDENCE_LEVELS as readonly string[]).includes(v);
}

export function isCategory(v: unknown): v is SpecCategory {
  return typeof v === 'string' && (VALID_CATEGORIES as readonly string[]).includes(v);
}

export function fileCategory(fileName: string, fm: Frontmatter): SpecCategory | undefined {
  const mapped = CATEGORY_MAP.find(([f]) => f === fileName);
  if (mapped) return mapped[1];
  const fromFm = asString(fm.data.category);
  if (isCategory(fromFm)) return fromFm;
  const stem = fileName.replace(/\.md$/, '');
  return isCategory(stem) ? stem : undefined;
}

/**
 * Parses `<spec-entry …>` attributes; reports text between attributes that is not one. A name given twice
 * keeps its LAST value, as both maestro-flow parsers do (`attrs[name] = value` in a loop); `repeated` names it.
 */
export function parseAttributes(raw: string): { attrs: Record<string, string>; junk: string; repeated: string[] } {
  const attrs: Record<string, string> = {};
  const repeated = new Set<string>();
  let junk = '';
  let last = 0;
  for (const m of raw.matchAll(ATTR_RE)) {
    if (m[1]! in attrs) repeated.add(m[1]!);
    attrs[m[1]!] = lfText(m[2]!);
    junk += `${raw.slice(last, m.index)} `;
    last = m.index! + m[0].length;
  }
  junk += raw.slice(last);
  return { attrs, junk: junk.replace(/\s+/g, ' ').trim(), repeated: [...repeated] };
}

/** What is wrong with an opening tag whose attribute text is not all `name="value"`. */
function badAttributeMessage(attrText: string, junk: string): string {
  // An odd number of quotes: the tag was cut inside a quoted value, at a raw `>` (BLOCK_RE comment).
  const cut = (attrText.match(/"/g) ?? []).length % 2 === 1 ? /([\w-]+)="[^"]*$/.exec(attrText) : null;
  if (cut) {
    return `attribute ${cut[1]} holds a raw ">": maestro-flow and Maestro end the opening tag at the first ">", so the rest of its value and every attribute after it are not read; write it as &gt;`;
  }
  return `unparseable attribute text ${JSON.stringify(junk.slice(0, 60))} (attributes must be name="value")`;
}

function titleFromBody(body: string): string | undefined {
  const m = /^###\s+(.+)$/m.exec(body);
  return m ? m[1]!.trim() : undefined;
}

function buildTagEntry(attrs: Record<string, string>, body: string, lineStart: number, lineEnd: number, ordinal: number): SpecEntry {
  const errors: string[] = [];
  const category = attrs.category;
  if (!isCategory(category)) errors.push(`category "${category ?? ''}" is not one of ${VALID_CATEGORIES.join('|')}`);
  const keywords = (attrs.keywords ?? '').split(',').map((k) => k.trim().toLowerCase()).filter((k) => k !== '');
  if (keywords.length === 0) errors.push('keywords must list at least one keyword');
  const date = attrs.date;
  if (!date || !/^\d{4}-\d{2}-\d{2}$/.test(date)) errors.push(`date "${date ?? ''}" must be YYYY-MM-DD`);
  const status = (attrs.status ?? '').toLowerCase();
  const content = lfText(body).replace(/^\s*\n/, '').replace(/\s+$/, '');
  return {
    form: 'tag',
    ordinal,
    lineStart,
    lineEnd,
    attrs,
    category,
    keywords,
    date,
    sid: attrs.sid || undefined,
    title: (attrs.title || titleFromBody(body) || '').trim(),
    description: attrs.description,
    source: attrs.source,
    ref: attrs.ref,
    confidence: isConfidence(attrs.confidence) ? attrs.confidence : undefined,
    // Readers normalise `superseded` to deprecated (FORMATS §1.7).
    status: status === 'deprecated' || status === 'superseded' ? 'deprecated' : 'active',
    supersedes: asList(attrs.supersedes),
    supersededBy: attrs['superseded-by'] || undefined,
    content,
    errors,
  };
}

/**
 * Parses one spec file's text. `file` is only used in findings. Binary
 * content and oversize files yield a finding and no entries.
 */
export function parseSpecText(text: string, file: string): ParsedSpecFile {
  const findings: Finding[] = [];
  const fileName = file.split(/[\\/]/).pop() ?? file;
  const frontmatter = parseFrontmatter(text);
  for (const p of frontmatterProblems(frontmatter, SPEC_FIELDS)) findings.push({ file, line: p.line, severity: 'warning', code: 'bad-frontmatter', message: p.message });
  const category = fileCategory(fileName, frontmatter);
  const result: ParsedSpecFile = { file, frontmatter, category, entries: [], findings };
  if (text.length > MAX_SPEC_FILE_BYTES) {
    findings.push({ file, line: 1, severity: 'error', code: 'file-too-large', message: `file is ${text.length} bytes, over the ${MAX_SPEC_FILE_BYTES}-byte limit; not indexed` });
    return result;
  }
  const binaryLine = binaryContentLine(text);
  if (binaryLine !== undefined) {
    findings.push({ file, line: binaryLine, severity: 'error', code: 'binary-content', message: `${BINARY_CONTENT}; not indexed` });
    return result;
  }

  const entries: SpecEntry[] = [];
  const covered: Array<[number, number]> = [];
  const lineOf = lineIndex(text);
  let ordinal = 0;
  for (const block of specBlocks(text)) {
    const { start, end } = block;
    covered.push([start, end]);
    const lineStart = lineOf(start);
    const lineEnd = lineOf(end);
    const { attrs, junk, repeated } = parseAttributes(block.attrText);
    // An opening tag that swallowed another one means an earlier block was never closed.
    if (block.body.includes('<spec-entry')) {
      findings.push({ file, line: lineStart, severity: 'error', code: 'unbalanced-tag', message: '<spec-entry> is not closed before the next <spec-entry>' });
    }
    if (junk) findings.push({ file, line: lineStart, severity: 'error', code: 'bad-attribute', message: badAttributeMessage(block.attrText, junk) });
    for (const name of repeated) {
      findings.push({ file, line: lineStart, severity: 'warning', code: 'repeated-attribute', message: `attribute ${name} is given more than once; the last value is read (as maestro-flow reads it)` });
    }
    const entry = buildTagEntry(attrs, block.body, lineStart, lineEnd, ++ordinal);
    for (const e of entry.errors) findings.push({ file, line: lineStart, severity: 'error', code: 'invalid-entry', message: `entry ${ordinal} (${entry.title || 'untitled'}): ${e}` });
    if (category && entry.category && isCategory(entry.category) && entry.category !== category) {
      findings.push({ file, line: lineStart, severity: 'warning', code: 'category-mismatch', message: `entry category "${entry.category}" differs from file category "${category}"` });
    }
    entries.push(entry);
  }
  // Tags outside any well-formed block: an opening without a close, or a stray close.
  const outside = (offset: number) => !insideAny(covered, offset);
  for (const m of text.matchAll(/<spec-entry\b|<\/spec-entry>/g)) {
    if (!outside(m.index!)) continue;
    const opening = m[0] !== '</spec-entry>';
    findings.push({
      file,
      line: lineOf(m.index!),
      severity: 'error',
      code: 'unbalanced-tag',
      message: opening ? '<spec-entry> has no matching </spec-entry> (or its opening tag is malformed); entry skipped' : '</spec-entry> without an opening <spec-entry>',
    });
  }

  entries.push(...parseLegacy(text, covered, ordinal));
  result.entries = entries;
  return result;
}

/** FORMATS §1.5 legacy `### [YYYY-MM-DD] Title` entries; lines inside tag blocks are ignored. */
function parseLegacy(text: string, covered: Array<[number, number]>, ordinalBase: number): SpecEntry[] {
  const out: SpecEntry[] = [];
  const lines = text.split('\n');
  let offset = 0;
  let current: { title: string; date: string; category?: string; line: number; body: string[] } | null = null;
  let ordinal = ordinalBase;
  const flush = (endLine: number) => {
    if (!current) return;
    const body = current.body.join('\n').trim();
    if (body) {
      out.push({
        form: 'legacy',
        ordinal: ++ordinal,
        lineStart: current.line,
        lineEnd: endLine,
        attrs: {},
        category: current.category,
        keywords: [],
        date: current.date.slice(0, 10),
        sid: undefined,
        title: current.title,
        description: undefined,
        source: undefined,
        ref: undefined,
        confidence: undefined,
        status: 'active',
        supersedes: [],
        supersededBy: undefined,
        content: `### ${current.title}\n\n${body}`,
        errors: [],
      });
    }
    current = null;
  };
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    const inside = insideAny(covered, offset);
    offset += raw.length + 1;
    if (inside) continue;
    const line = raw.replace(/\r$/, '');
    const m = LEGACY_HEADING_RE.exec(line);
    if (m) {
      flush(i);
      const cat = /^###\s+\[([\w-]+)\]\s+\[/.exec(line)?.[1];
      current = { title: m[2]!.trim(), date: m[1]!, line: i + 1, body: [], ...(cat ? { category: cat } : {}) };
      continue;
    }
    if (current) current.body.push(line);
  }
  flush(lines.length);
  return out;
}

export function frontmatterKeywords(fm: Frontmatter): string[] {
  return asList(fm.data.keywords).map((k) => k.toLowerCase());
}

/** Whether an offset falls in one of the (sorted, disjoint) block spans. */
function insideAny(spans: Array<[number, number]>, offset: number): boolean {
  let lo = 0;
  let hi = spans.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const [s, e] = spans[mid]!;
    if (offset < s) hi = mid - 1;
    else if (offset >= e) lo = mid + 1;
    else return true;
  }
  return false;
}
