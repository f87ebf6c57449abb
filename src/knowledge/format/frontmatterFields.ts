/**
 * The type each format expects of the frontmatter keys its readers use (FORMATS §1.3, §2.3, §8.4), and the
 * check that names a key whose value has another type. The readers are not changed by it: they read such a
 * value as maestro-flow and GUI-Anything do (a list where text is expected counts as absent, a map where a
 * list is expected as an empty list), which is silent; this check is how `spec health`, `knowledge audit`
 * and `wiki lint` say so, with the key's line and what the reader did instead.
 *
 * Kinds: `text` (a string; a number or true/false is read as its text), `list` (a list, or comma-separated
 * text), `number` (an unquoted number), `version` (a number, or text starting with digits), `source` (a
 * map, or the legacy text form), `maps` (a list, of maps as the writers write it). An empty value (`key:` alone, `[]`, null) is
 * absent, never a problem: that is how the other tools write an empty value. Unknown keys are not checked.
 */
import type { FrontmatterProblem, FrontMatter, FrontValue, Frontmatter } from './frontmatter.js';

export type FieldKind = 'text' | 'list' | 'number' | 'version' | 'source' | 'maps';

/** A key whose value has another type than its format expects; `key` names it. */
export interface FieldProblem extends FrontmatterProblem {
  key: string;
}

export interface FieldRule {
  kind: FieldKind;
  /** What the reader does with a value of another type, as the finding says it. */
  instead: string;
}

const text = (instead: string): FieldRule => ({ kind: 'text', instead });
const list = (instead: string): FieldRule => ({ kind: 'list', instead });
const IGNORED = 'it is read as if it were not there';

/** `.workflow/specs/*.md` (FORMATS §1.3): the keys the spec readers use. */
export const SPEC_FIELDS: Readonly<Record<string, FieldRule>> = {
  title: text(IGNORED),
  readMode: text(IGNORED),
  priority: text(IGNORED),
  category: text('the file gets its category from its name, or none'),
  keywords: list("the file's keywords are not read, so its `### [date]` entries are not found by them in search or by a brief's keyword match"),
};

/** `.workflow/knowhow/*.md` (FORMATS §2.3, §2.4). */
export const KNOWHOW_FIELDS: Readonly<Record<string, FieldRule>> = {
  title: text('the title is taken from the first # heading, else the file name'),
  description: text(IGNORED),
  summary: text(IGNORED),
  type: text('the type is taken from the file name'),
  category: text(IGNORED),
  explicitId: text(IGNORED),
  id: text(IGNORED),
  created: text(IGNORED),
  status: text('the document reads as active, so search and briefs still offer it'),
  lifecycleStatus: text(IGNORED),
  supersededBy: text(IGNORED),
  'superseded-by': text(IGNORED),
  confidence: text(IGNORED),
  keywords: list('its keywords are not read, so search does not find the document by them'),
  tags: list('its tags are not read, so search does not find the document by them'),
  supersedes: list('the documents it names are not read as superseded'),
  related: list(IGNORED),
  codePaths: list(IGNORED),
  relatedPaths: list(IGNORED),
};


/** GUI-Anything wiki entries (FORMATS §8.4), read in the wiki dialect (numbers and null typed). */
export const WIKI_FIELDS: Readonly<Record<string, FieldRule>> = {
  id: text('the id is taken from the file name'),
  slug: text('the slug is taken from the file name'),
  request: text("without a request the entry is not read: search and the observer's lookups skip it"),
  type: text('the type is taken from the folder'),
  facet: text(IGNORED),
  created: text(IGNORED),
  updated: text(IGNORED),
  status: text('the entry reads as a draft'),
  intent_key: text('the category is taken from the folder'),
  tags: list('its tags are not read, so search does not find the entry by them'),
  related: list(IGNORED),
  aliases: list(IGNORED),
  evolution_parent: list(IGNORED),
  version: { kind: 'version', instead: 'it is read as version 1, and the next update writes version 2' },
  extraction_confidence: { kind: 'number', instead: 'it is read as 0' },
  source: { kind: 'source', instead: 'the entry names no session or exploration' },
  sources: { kind: 'maps', instead: IGNORED },
};

/** What the value is, in a finding's words. */
function typeOf(v: FrontValue): string {
  if (Array.isArray(v)) return 'a list';
  if (v === null) return 'null';
  if (typeof v === 'object') return 'a map';
  if (typeof v === 'boolean') return String(v);
  if (typeof v === 'number') return `the number ${v}`;
  return `the text ${JSON.stringify(v.length > 60 ? `${v.slice(0, 60)}…` : v)}`;
}

const EXPECTED: Readonly<Record<FieldKind, string>> = {
  text: 'text',
  list: 'a list (or comma-separated text)',
  number: 'an unquoted number',
  version: 'a number',
  source: 'a map with session_id and exploration_id',
  maps: 'a list of maps',
};

function fits(kind: FieldKind, v: FrontValue): boolean {
  const isMap = v !== null && typeof v === 'object' && !Array.isArray(v);
  switch (kind) {
    case 'text':
      return !Array.isArray(v) && !isMap;
    case 'list':
      return Array.isArray(v) || typeof v === 'string';
    case 'number':
      return typeof v === 'number';
    case 'version':
      return typeof v === 'number' || (typeof v === 'string' && /^\s*\d/.test(v));
    case 'source':
      return isMap || typeof v === 'string';
    case 'maps':
      return Array.isArray(v);
    default: {
      const never: never = kind;
      return never;
    }
  }
}

function empty(v: FrontValue | undefined): boolean {
  return v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);
}

/** One problem per known key whose value has another type than `fields` expects, on that key's line. */
export function fieldProblems(fm: Pick<Frontmatter, 'data' | 'keyLines'>, fields: Readonly<Record<string, FieldRule>>): FieldProblem[] {
  const data: FrontMatter = fm.data;
  const out: FieldProblem[] = [];
  for (const [key, rule] of Object.entries(fields)) {
    const v = data[key];
    if (empty(v) || fits(rule.kind, v!)) continue;
    out.push({ key, line: fm.keyLines[key] ?? 1, message: `${key}: expected ${EXPECTED[rule.kind]}, got ${typeOf(v!)}; ${rule.instead}` });
  }
  return out;
}

/** Every problem of a block in line order: the reader's (lines it skips, unfinished lists and maps), then each key of the wrong type. */
export function frontmatterProblems(fm: Pick<Frontmatter, 'data' | 'keyLines' | 'problems'>, fields: Readonly<Record<string, FieldRule>>): FrontmatterProblem[] {
  return [...fm.problems, ...fieldProblems(fm, fields)].sort((a, b) => a.line - b.line);
}
