/**
 * A tolerant reader and a strict writer for the small YAML subset wiki files
 * use (FORMATS §8.4–8.5): scalars (quoted or not), inline `[a, b]` lists,
 * block lists of scalars or of small maps, and one level of nested map
 * (`source:`). Broken lines are reported with their line number; the reader
 * never throws, so one bad file cannot hide the rest of the wiki.
 */

export type FrontValue = string | number | boolean | null | FrontValue[] | { [k: string]: FrontValue };
export type FrontMatter = Record<string, FrontValue>;

export interface ParsedDoc {
  data: FrontMatter;
  body: string;
  /** 1-based line where the body starts. */
  bodyLine: number;
  problems: Array<{ line: number; reason: string }>;
  hasFrontmatter: boolean;
}

function scalar(raw: string): FrontValue {
  const v = raw.trim();
  if (v === '') return '';
  if (v.startsWith('"') && v.endsWith('"') && v.length >= 2) {
    try {
      return JSON.parse(v) as string;
    } catch {
      return v.slice(1, -1);
    }
  }
  if (v.startsWith("'") && v.endsWith("'") && v.length >= 2) return v.slice(1, -1).replace(/''/g, "'");
  if (v.startsWith('[') && v.endsWith(']')) {
    const inner = v.slice(1, -1).trim();
    return inner ? inner.split(',').map((s) => scalar(s) as string) : [];
  }
  if (v === 'true' || v === 'false') return v === 'true';
  if (v === 'null' || v === '~') return null;
  if (/^-?\d+(\.\d+)?$/.test(v)) return Number(v);
  return v;
}

const KEY = /^([A-Za-z_][\w-]*):(?:\s+(.*))?$/;

export function parseFrontmatter(text: string): ParsedDoc {
  const lines = text.split(/\r?\n/);
  const problems: ParsedDoc['problems'] = [];
  if (lines[0]?.trim() !== '---') return { data: {}, body: text, bodyLine: 1, problems, hasFrontmatter: false };
  const end = lines.findIndex((l, i) => i > 0 && l.trim() === '---');
  if (end < 0) {
    problems.push({ line: 1, reason: 'frontmatter opened with --- but never closed' });
    return { data: {}, body: text, bodyLine: 1, problems, hasFrontmatter: true };
  }
  const data: FrontMatter = {};
  let key: string | null = null;
  for (let i = 1; i < end; i += 1) {
    const line = lines[i]!;
    if (!line.trim() || line.trim().startsWith('#')) continue;
    const indented = /^\s/.test(line);
    if (!indented) {
      const m = KEY.exec(line);
      if (!m) {
        problems.push({ line: i + 1, reason: `unreadable frontmatter line "${line.slice(0, 60)}"` });
        key = null;
        continue;
      }
      key = m[1]!;
      data[key] = m[2] === undefined ? null : scalar(m[2]);
      continue;
    }
    if (!key) {
      problems.push({ line: i + 1, reason: 'indented line without a key above it' });
      continue;
    }
    const item = /^\s+-\s*(.*)$/.exec(line);
    const current = data[key];
    if (item) {
      const list: FrontValue[] = Array.isArray(current) ? current : [];
      const kv = KEY.exec(item[1]!);
      list.push(kv && !item[1]!.startsWith('"') ? { [kv[1]!]: scalar(kv[2] ?? '') } : scalar(item[1]!));
      data[key] = list;
      continue;
    }
    const kv = KEY.exec(line.trim());
    if (!kv) {
      problems.push({ line: i + 1, reason: `unreadable frontmatter line "${line.trim().slice(0, 60)}"` });
      continue;
    }
    if (Array.isArray(current) && current.length && typeof current[current.length - 1] === 'object' && current[current.length - 1] !== null) {
      (current[current.length - 1] as Record<string, FrontValue>)[kv[1]!] = scalar(kv[2] ?? '');
    } else {
      const map = current && typeof current === 'object' && !Array.isArray(current) ? current : {};
      map[kv[1]!] = scalar(kv[2] ?? '');
      data[key] = map;
    }
  }
  return { data, body: lines.slice(end + 1).join('\n'), bodyLine: end + 2, problems, hasFrontmatter: true };
}

function quote(v: string): string {
  return JSON.stringify(v);
}

function renderScalar(v: FrontValue): string {
  if (typeof v === 'string') return quote(v);
  if (v === null) return 'null';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return quote(JSON.stringify(v));
}

/** Renders keys in insertion order; `undefined` values are left out. */
export function renderFrontmatter(data: Record<string, FrontValue | undefined>): string {
  const out = ['---'];
  for (const [key, value] of Object.entries(data)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) {
      if (!value.length) {
        out.push(`${key}: []`);
        continue;
      }
      out.push(`${key}:`);
      for (const item of value) {
        if (item && typeof item === 'object' && !Array.isArray(item)) {
          const entries = Object.entries(item);
          entries.forEach(([k, v], idx) => out.push(`${idx === 0 ? '  - ' : '    '}${k}: ${renderScalar(v)}`));
        } else out.push(`  - ${renderScalar(item)}`);
      }
    } else if (value && typeof value === 'object') {
      out.push(`${key}:`);
      for (const [k, v] of Object.entries(value)) out.push(`  ${k}: ${renderScalar(v)}`);
    } else out.push(`${key}: ${renderScalar(value)}`);
  }
  out.push('---');
  return out.join('\n');
}

/** Splits a markdown body into `## ` sections (heading text → content). */
export function sections(body: string): Map<string, string> {
  const out = new Map<string, string>();
  let current: string | null = null;
  let buf: string[] = [];
  for (const line of body.split('\n')) {
    const m = /^##\s+(.+?)\s*$/.exec(line);
    if (m) {
      if (current !== null) out.set(current, buf.join('\n').trim());
      current = m[1]!;
      buf = [];
    } else if (current !== null) buf.push(line);
  }
  if (current !== null) out.set(current, buf.join('\n').trim());
  return out;
}
