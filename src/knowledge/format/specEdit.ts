/**
 * Finding a spec entry and changing attributes on its opening tag, safely.
 *
 * An edit rewrites the opening tag in place, so it must know exactly where
 * that tag starts and ends and which text is which attribute. It uses the
 * parser's own block scanner (`specBlocks`, maestro-flow's grammar) and
 * refuses, with file and line and without writing, when the entry has a
 * finding that leaves this uncertain (`UNSAFE_TO_EDIT`: a raw `>` in a
 * value, text that is not `name="value"`, a block never closed) or when the
 * sid it is addressed by belongs to more than one entry. After the edit the
 * text is parsed again and must read back with the new values.
 */
import { readFileSync } from 'node:fs';
import { MaestroError } from '../../core/errors.js';
import { specEntryId } from './corpus.js';
import { assertInsideRoot, listSpecFiles, specDirs, type SpecDir, type WorkflowRoot } from './root.js';
import { ATTR_RE, UNSAFE_TO_EDIT, parseSpecText, specBlocks, type Finding, type ParsedSpecFile, type SpecEntry } from './specParser.js';

export interface Located {
  file: string;
  dir: SpecDir;
  ordinal: number;
  /** 1-based line of the opening tag. */
  line: number;
  sid: string | undefined;
  attrs: Record<string, string>;
  /** Findings on this entry that make rewriting its opening tag unsafe. */
  problems: Finding[];
}

/** Text of a spec file, or undefined when there is none; anything else unreadable is an error naming the path. */
export function readSpecFile(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    // fs names the path for open() failures but not for read(): EISDIR says only "illegal operation on a directory".
    const why = code === 'EISDIR' ? 'it is a directory, not a file' : (err as Error).message;
    throw new MaestroError('CORRUPT_FILE', `Cannot read spec file ${file}: ${why}. Nothing was written.`, { cause: err });
  }
}

/** The findings of `parsed` that fall on `entry` and make its opening tag unsafe to rewrite. */
export function entryProblems(parsed: ParsedSpecFile, entry: SpecEntry): Finding[] {
  return parsed.findings.filter((f) => UNSAFE_TO_EDIT.has(f.code) && f.line >= entry.lineStart && f.line <= entry.lineEnd);
}

function cannotEdit(what: string, file: string, line: number, problems: Finding[]): MaestroError {
  const list = problems.map((p) => (p.line === line ? p.message : `line ${p.line}: ${p.message}`)).join('; ');
  return new MaestroError('CORRUPT_FILE', `Cannot change ${what} at ${file}:${line}: ${list}. Repair it by hand (\`maestro spec health\` lists it); nothing was written.`, {
    details: { file, line, findings: problems.map((p) => ({ line: p.line, code: p.code })) },
  });
}

/** Refuses, before anything is written, an entry whose opening tag cannot be rewritten safely. */
export function assertEditable(loc: Located, ref: string): void {
  if (loc.problems.length) throw cannotEdit(`spec entry ${ref}`, loc.file, loc.line, loc.problems);
}

/**
 * Finds a tag entry by sid, `spec:<sid>` or canonical id in the writable spec dirs, to change it:
 * a file a symbolic link leads out of the root is refused here, before any lock is taken. A sid
 * that more than one entry carries is refused, naming every place (`maestro spec health` reports it too).
 */
export function locateSpecEntry(root: WorkflowRoot, ref: string): Located {
  const sidRef = ref.startsWith('spec:S-') ? ref.slice(5) : ref;
  const found: Array<Located & { id: string }> = [];
  const unread: string[] = [];
  for (const dir of specDirs(root).filter((d) => d.writable)) {
    for (const file of listSpecFiles(dir.dir)) {
      const parsed = parseSpecText(readFileSync(file, 'utf8'), file);
      for (const f of parsed.findings) if (f.code === 'binary-content') unread.push(`${f.file}:${f.line}`);
      for (const e of parsed.entries) {
        if (e.form !== 'tag') continue;
        const id = specEntryId(dir, file, e.ordinal);
        if ((e.sid && e.sid === sidRef) || id === ref) {
          found.push({ file, dir, ordinal: e.ordinal, line: e.lineStart, sid: e.sid, attrs: e.attrs, problems: entryProblems(parsed, e), id });
        }
      }
    }
  }
  if (found.length > 1) {
    const places = found.map((l) => `${l.file}:${l.line} (${l.id})`).join(', ');
    throw new MaestroError('KNOWLEDGE_CONFLICT', `sid "${sidRef}" is carried by ${found.length} spec entries: ${places}. Give all but one a new sid by hand; nothing was written.`, {
      details: { sid: sidRef, places: found.map((l) => ({ file: l.file, line: l.line, id: l.id })) },
    });
  }
  const [hit] = found;
  if (!hit) {
    // A file skipped as binary may hold it: said, not taken for an entry that is not there.
    const skipped = unread.length ? `; not searched, holding binary (NUL or invalid UTF-8) content: ${unread.join(', ')}` : '';
    throw new MaestroError('UNKNOWN_KNOWLEDGE_ID', `No spec entry with sid or id "${ref}" in the writable spec folders (legacy heading entries cannot be changed this way)${skipped}.`);
  }
  assertInsideRoot(root, hit.file);
  const { id: _id, ...loc } = hit;
  return loc;
}

/**
 * Sets `values` on an opening tag known to be all `name="value"` pairs: each existing pair (every copy) in place,
 * new ones after the last attribute. Whatever stood between that attribute and `>` (a line break, CRLF or LF, in
 * a tag whose `>` has a line of its own) is kept, so an edit adds no line break and removes none.
 */
function setAttributes(tag: string, values: Record<string, string>): string {
  const inner = tag.slice(0, -1);
  const done = new Set<string>();
  let out = '';
  let last = 0;
  for (const m of inner.matchAll(ATTR_RE)) {
    if (!Object.hasOwn(values, m[1]!)) continue;
    out += `${inner.slice(last, m.index)}${m[1]}="${values[m[1]!]}"`;
    last = m.index! + m[0].length;
    done.add(m[1]!);
  }
  out += inner.slice(last);
  const added = Object.entries(values).filter(([name]) => !done.has(name));
  const attrs = out.trimEnd();
  return `${attrs}${added.map(([name, v]) => ` ${name}="${v}"`).join('')}${out.slice(attrs.length)}>`;
}

/**
 * Sets attributes on the opening tag of the `ordinal`-th block in `text`: an existing ` name="…"`
 * is replaced in place, a new one goes before `>`. Works on the whole opening tag, so tags
 * spanning lines are handled. `file` is only used in errors. Throws, changing nothing, when the
 * entry has a finding that makes the rewrite unsafe, or when the result would not read back.
 */
export function upsertTagAttributes(text: string, ordinal: number, values: Record<string, string>, file = 'spec file'): string {
  for (const [name, v] of Object.entries(values)) {
    if (!/^[\w-]+$/.test(name) || /["<>\r\n]/.test(v)) throw new MaestroError('BAD_INPUT', `attribute ${name}=${JSON.stringify(v)} may not hold " < > or a line break (escape it first); nothing was written.`);
  }
  const parsed = parseSpecText(text, file);
  const entry = parsed.entries.find((e) => e.form === 'tag' && e.ordinal === ordinal);
  const block = specBlocks(text)[ordinal - 1];
  if (!entry || !block) throw new MaestroError('INTERNAL', `spec entry ${ordinal} vanished while editing ${file}`);
  const problems = entryProblems(parsed, entry);
  if (problems.length) throw cannotEdit(`spec entry ${ordinal}${entry.title ? ` ("${entry.title}")` : ''}`, file, entry.lineStart, problems);
  const end = block.start + block.openLength;
  const next = text.slice(0, block.start) + setAttributes(text.slice(block.start, end), values) + text.slice(end);
  const after = parseSpecText(next, file).entries.filter((e) => e.form === 'tag');
  const edited = after[ordinal - 1];
  if (after.length !== parsed.entries.filter((e) => e.form === 'tag').length || !edited || Object.entries(values).some(([k, v]) => edited.attrs[k] !== v)) {
    throw new MaestroError('INTERNAL', `editing spec entry ${ordinal} at ${file}:${entry.lineStart} would not read back as written; nothing was written.`);
  }
  return next;
}
