/**
 * The frontmatter reader and writer (FORMATS §1.3, §2.3). Deliberately not full
 * YAML, to read exactly what the other tool writes and reads: `key: value`
 * lines with quotes stripped, `[a, b]` inline arrays, `key:` followed by
 * `- item` lines as a list, values starting `[`/`{` tried as JSON. Nested
 * blocks (`source:` with indented keys) are kept as an object of strings.
 */

export type FrontValue = string | string[] | boolean | number | null | Record<string, unknown> | unknown[];

export interface Frontmatter {
  data: Record<string, FrontValue>;
  /** The body after the closing `---` (and one following newline). */
  body: string;
  /** Lines taken by the frontmatter block, including both `---` lines (0 if none). */
  lineCount: number;
  /** Problems found, each with a 1-based line. The rest of the block is still read. */
  problems: Array<{ line: number; message: string }>;
  present: boolean;
}

/** FORMATS §1.3: trimmed text starts with `---` and contains `\n---` after position 3. */
export function hasFrontmatter(text: string): boolean {
  const t = text.trimStart();
  return t.startsWith('---') && t.indexOf('\n---', 3) !== -1;
}

function unquote(v: string): string {
  if (v.length >= 2 && ((v.startsWith('"') && v.endsWith('"')) || (v.startsWith("'") && v.endsWith("'")))) {
    if (v.startsWith('"')) {
      try {
        return JSON.parse(v) as string;
      } catch {
        return v.slice(1, -1);
      }
    }
    return v.slice(1, -1).replace(/''/g, "'");
  }
  return v;
}

/** False when `v` (starting with [ or {) cannot be JSON: its first value character is one no JSON value starts with. */
function mayBeJson(v: string): boolean {
  let i = 1;
  while (i < v.length && (v[i] === ' ' || v[i] === '\t' || v[i] === '\n' || v[i] === '\r')) i++;
  const c = v[i];
  if (c === undefined) return true;
  if (v[0] === '{') return c === '"' || c === '}';
  if (c === 't' || c === 'f' || c === 'n') {
    // Only the literals true, false and null start with these, followed by a delimiter.
    const word = c === 't' ? 'true' : c === 'f' ? 'false' : 'null';
    const next = v[i + word.length];
    return v.startsWith(word, i) && (next === undefined || next === ',' || next === ']' || next === ' ' || next === '\t' || next === '\n' || next === '\r');
  }
  return c === '"' || c === '[' || c === '{' || c === ']' || c === '-' || (c >= '0' && c <= '9');
}

function parseJson(v: string): FrontValue | undefined {
  try {
    return JSON.parse(v) as FrontValue;
  } catch {
    return undefined;
  }
}

function scalar(raw: string): FrontValue {
  const v = raw.trim();
  if (v === '') return '';
  if (v.startsWith('[') || v.startsWith('{')) {
    // A flow list of bare words (`[a, b]`, the usual tags line) is not JSON: the
    // parse is skipped rather than left to throw (a thrown error costs more than the rest of the file).
    const json = mayBeJson(v) ? parseJson(v) : undefined;
    if (json !== undefined) return json;
    if (v.startsWith('[') && v.endsWith(']')) {
      return v
        .slice(1, -1)
        .split(',')
        .map((s) => unquote(s.trim()))
        .filter((s) => s !== '');
    }
  }
  if (v === 'true') return true;
  if (v === 'false') return false;
  return unquote(v);
}

export function parseFrontmatter(text: string): Frontmatter {
  const empty: Frontmatter = { data: {}, body: text, lineCount: 0, problems: [], present: false };
  if (!hasFrontmatter(text)) return empty;
  const lead = text.length - text.trimStart().length;
  const lines = text.slice(lead).split('\n');
  let close = -1;
  for (let i = 1; i < lines.length; i++) {
    if (/^---\s*$/.test(lines[i]!.replace(/\r$/, ''))) {
      close = i;
      break;
    }
  }
  if (close === -1) return empty;
  const leadLines = text.slice(0, lead).split('\n').length - 1;
  const data: Record<string, FrontValue> = {};
  const problems: Frontmatter['problems'] = [];
  let listKey: string | null = null;
  let nestKey: string | null = null;
  for (let i = 1; i < close; i++) {
    const line = lines[i]!.replace(/\r$/, '');
    const lineNo = leadLines + i + 1;
    if (line.trim() === '' || line.trimStart().startsWith('#')) continue;
    const item = /^\s*-\s*(.*)$/.exec(line);
    if (item && listKey) {
      const arr = data[listKey];
      const value = scalar(item[1]!);
      if (Array.isArray(arr)) (arr as unknown[]).push(typeof value === 'string' ? value : value);
      continue;
    }
    const nested = /^\s+([\w-]+)\s*:\s*(.*)$/.exec(line);
    if (nested && nestKey) {
      (data[nestKey] as Record<string, unknown>)[nested[1]!] = scalar(nested[2]!);
      continue;
    }
    const kv = /^([\w.-]+)\s*:\s*(.*)$/.exec(line);
    if (!kv) {
      problems.push({ line: lineNo, message: `frontmatter line is not "key: value": ${JSON.stringify(line.slice(0, 80))}` });
      listKey = nestKey = null;
      continue;
    }
    const key = kv[1]!;
    const rest = kv[2]!;
    listKey = nestKey = null;
    if (rest.trim() === '' || rest.trim() === '[]') {
      // `key:` opens either a block list or a nested block; decided by the next line.
      const next = lines[i + 1]?.replace(/\r$/, '') ?? '';
      if (rest.trim() === '' && /^\s+[\w-]+\s*:/.test(next)) {
        data[key] = {};
        nestKey = key;
      } else {
        data[key] = [];
        listKey = key;
      }
      continue;
    }
    data[key] = scalar(rest);
  }
  const consumed = lines.slice(0, close + 1).join('\n').length + 1;
  const body = text.slice(lead + consumed);
  return { data, body, lineCount: leadLines + close + 1, problems, present: true };
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
