/**
 * Spec writers: append, supersede, deprecate, mark a conflict. Every one is a
 * lock-guarded atomic read-modify-write (lock.ts, atomic.ts): the file is read
 * under the lock, so two writers never overwrite each other's entries. What
 * they add takes the file's line ending (text.ts `lineEnding`), and an edit
 * changes only attribute text, so a CRLF file stays all CRLF.
 */
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { MaestroError } from '../../core/errors.js';
import { writeFileAtomic, type AtomicWriteHooks } from './atomic.js';
import { specEntryId } from './corpus.js';
import { addKnowhow } from './knowhowWriter.js';
import { withCorpusLock } from './lock.js';
import { assertInsideRoot, listSpecFiles, specDirs, type SpecDir, type WorkflowRoot } from './root.js';
import { renderSeed } from './seeds.js';
import { CATEGORY_MAP, CONFIDENCE_LEVELS, MAX_SPEC_ENTRY_SIZE, UNSAFE_TO_APPEND, isCategory, isConfidence, parseAttributes, parseSpecText, type Finding, type SpecCategory, type SpecConfidence } from './specParser.js';
import { assertEditable, locateSpecEntry, readSpecFile, upsertTagAttributes, type Located } from './specEdit.js';
import { decodeEntities, escapeAttr, lineEnding, withLineEnding } from './text.js';

export interface AppendSpecInput {
  category: string;
  title: string;
  content: string;
  keywords: string[];
  description?: string;
  source?: string;
  ref?: string;
  confidence?: SpecConfidence;
  sid?: string;
  scope?: 'project' | 'team' | 'personal' | 'global';
  /** Target file name inside the scope's dir; default: the category's file (CATEGORY_MAP, first match). */
  file?: string;
  allowDuplicateTitle?: boolean;
  now?: Date;
  hooks?: AtomicWriteHooks;
}

export interface AppendSpecResult {
  outcome: 'created' | 'skipped-duplicate';
  id: string;
  sid: string | null;
  file: string;
  /** Knowhow file that holds oversize content (size guard), if any. */
  overflowKnowhowId?: string;
}

function utcDate(now: Date): string {
  return now.toISOString().slice(0, 10);
}

/** `S-YYYYMMDD-xxxx` (FORMATS §1.7). */
export function newSid(now: Date = new Date()): string {
  return `S-${utcDate(now).replace(/-/g, '')}-${Math.random().toString(36).slice(2, 6).padEnd(4, '0')}`;
}

/**
 * A fresh sid no spec file of `dir` uses yet. Four base36 characters collide
 * often enough among one day's entries (a few percent at 400) that the
 * writer, holding the file's lock, checks the day's sids and draws again.
 */
function unusedSid(now: Date, dir: string, file: string, text: string): string {
  const day = `sid="S-${utcDate(now).replace(/-/g, '')}-`;
  const taken = new Set<string>();
  const collect = (t: string) => {
    for (let i = t.indexOf(day); i >= 0; i = t.indexOf(day, i + day.length)) taken.add(t.slice(i + 5, t.indexOf('"', i + 5)));
  };
  collect(text);
  for (const other of listSpecFiles(dir)) if (other !== file) collect(readFileSync(other, 'utf8'));
  for (;;) {
    const sid = newSid(now);
    if (!taken.has(sid)) return sid;
  }
}

export function targetFileFor(category: SpecCategory): string {
  return CATEGORY_MAP.find(([, c]) => c === category)![0];
}

function scopeDir(root: WorkflowRoot, scope: AppendSpecInput['scope'] = 'project'): SpecDir {
  const dir = specDirs({ ...root, includeGlobal: scope === 'global' }).find((d) => d.scope === scope);
  if (!dir || !dir.writable) throw new MaestroError('BAD_INPUT', `Cannot write ${scope} specs here${root.confined ? ' (--workflow-root confines writes to the root)' : ''}.`);
  return dir;
}

/**
 * The confidence of an entry, refused unless it is one the readers keep. It is
 * written raw (FORMATS §1.4), so anything else would either read back as no
 * confidence at all or, holding `"` or `>`, break the opening tag. `name` is
 * what the caller calls it (`--confidence` on the command line).
 */
export function checkConfidence(value: unknown, name = 'confidence'): SpecConfidence {
  if (isConfidence(value)) return value;
  throw new MaestroError('BAD_INPUT', `${name} ${JSON.stringify(value)} is not a spec confidence: use one of ${CONFIDENCE_LEVELS.join('|')}. Nothing was written.`);
}

/**
 * Turns `<spec-entry` and `</spec-entry` in free text into `&lt;spec-entry` /
 * `&lt;/spec-entry`, so text inside a block can never open or close one (the
 * parser's block regex would otherwise end the entry there). Readers show the
 * text as written; `decodeEntities` turns it back for display.
 */
export function neutralizeSpecTags(text: string): string {
  return text.replace(/<(\/?)spec-entry/g, '&lt;$1spec-entry');
}

/** `<spec-entry …>` text exactly as the writer lays it out (FORMATS §1.4). */
export function formatSpecEntry(a: { category: string; keywords: string[]; date: string; sid?: string; title: string; description?: string; source?: string; ref?: string; confidence?: string }, content: string): string {
  const attrs = [
    `category="${a.category}"`,
    `keywords="${a.keywords.join(',')}"`,
    `date="${a.date}"`,
    ...(a.sid ? [`sid="${escapeAttr(a.sid)}"`] : []),
    `title="${escapeAttr(a.title)}"`,
    ...(a.description ? [`description="${escapeAttr(a.description)}"`] : []),
    ...(a.source ? [`source="${escapeAttr(a.source)}"`] : []),
    ...(a.ref ? [`ref="${escapeAttr(a.ref)}"`] : []),
    ...(a.confidence ? [`confidence="${checkConfidence(a.confidence)}"`] : []),
  ];
  // The heading is body text like the content: the title attribute is escaped, the heading neutralized.
  return `<spec-entry ${attrs.join(' ')}>\n\n### ${neutralizeSpecTags(a.title)}\n\n${neutralizeSpecTags(content).trim()}\n\n</spec-entry>`;
}

/**
 * Refuses to append to a file whose block structure is uncertain (an unclosed `<spec-entry>` would
 * swallow the new entry, and the id printed for it would name another one), naming each place.
 */
function refuseBrokenStructure(findings: Finding[], file: string): void {
  const broken = findings.filter((f) => UNSAFE_TO_APPEND.has(f.code));
  if (!broken.length) return;
  const list = broken.map((f) => `line ${f.line}: ${f.message}`).join('; ');
  throw new MaestroError('CORRUPT_FILE', `Cannot append to ${file}: ${list}. An entry appended now would not read back as written: repair the file by hand first (\`maestro spec health\` lists it); nothing was written.`, {
    details: { file, findings: broken.map((f) => ({ line: f.line, code: f.code })) },
  });
}

/** An explicit sid already carried by an entry would make two entries answer to it: refused, naming where. */
function refuseTakenSid(root: WorkflowRoot, sid: string): void {
  let taken: ReturnType<typeof locateSpecEntry> | undefined;
  try {
    taken = locateSpecEntry(root, sid);
  } catch (err) {
    if (err instanceof MaestroError && err.code === 'UNKNOWN_KNOWLEDGE_ID') return;
    throw err;
  }
  throw new MaestroError('KNOWLEDGE_CONFLICT', `sid "${sid}" is already carried by the spec entry at ${taken.file}:${taken.line}; nothing was written.`);
}

function cleanKeywords(keywords: string[]): string[] {
  const out = [...new Set(keywords.map((k) => k.trim().toLowerCase()).filter((k) => k !== ''))];
  for (const k of out) if (/[",<>]/.test(k)) throw new MaestroError('BAD_INPUT', `keyword ${JSON.stringify(k)} may not contain " , < or >.`);
  if (out.length === 0) throw new MaestroError('BAD_INPUT', 'A spec entry needs at least one keyword (--keywords a,b).');
  return out;
}

export function appendSpecEntry(root: WorkflowRoot, input: AppendSpecInput): AppendSpecResult {
  if (!isCategory(input.category)) throw new MaestroError('BAD_INPUT', `category "${input.category}" must be one of coding|arch|debug|test|review|learning|ui.`);
  const title = input.title.replace(/\s+/g, ' ').trim();
  if (!title) throw new MaestroError('BAD_INPUT', 'A spec entry needs a title.');
  if (/[\u0000]/.test(input.content + title)) throw new MaestroError('BAD_INPUT', 'Spec content may not contain NUL bytes.');
  const keywords = cleanKeywords(input.keywords);
  // Checked before anything is written: the size guard below may write a knowhow file first.
  if (input.confidence !== undefined) checkConfidence(input.confidence);
  const now = input.now ?? new Date();
  const dir = scopeDir(root, input.scope);
  const fileName = input.file ?? targetFileFor(input.category);
  if (!/^[\w.-]+\.md$/.test(fileName)) throw new MaestroError('BAD_INPUT', `spec file name "${fileName}" must be a plain *.md name.`);
  const file = join(dir.dir, fileName);
  assertInsideRoot(root, file);
  return withCorpusLock([file], () => {
    const found = readSpecFile(file);
    const old = found ?? renderSeed(fileName, input.category);
    const parsed = parseSpecText(old, file);
    refuseBrokenStructure(parsed.findings, file);
    if (input.sid) refuseTakenSid(root, input.sid);
    const sid = input.sid ?? unusedSid(now, dir.dir, file, old);
    const wanted = title.toLowerCase();
    const dup = parsed.entries.find((e) => decodeEntities(e.title).trim().toLowerCase() === wanted);
    if (dup && !input.allowDuplicateTitle) {
      return { outcome: 'skipped-duplicate', id: specEntryId(dir, file, dup.ordinal), sid: dup.sid ?? null, file };
    }
    let content = input.content;
    let ref = input.ref;
    let overflowKnowhowId: string | undefined;
    if (content.length > MAX_SPEC_ENTRY_SIZE) {
      // Size guard (FORMATS §1.4): the full text goes to a knowhow DOC file.
      const doc = addKnowhow(root, { type: 'document', title, body: content, keywords, now, ...(input.description ? { description: input.description } : {}) });
      overflowKnowhowId = doc.id;
      ref = `knowhow/${basename(doc.path)}`;
      content = content.replace(/\s+/g, ' ').trim().slice(0, 200);
    }
    // The entry, its content included, takes the file's line ending (text.ts `lineEnding`): CRLF in a CRLF file.
    const eol = lineEnding(old);
    const entry = withLineEnding(formatSpecEntry({ category: input.category, keywords, date: utcDate(now), sid, title, ...pick(input, ['description', 'source', 'confidence']), ...(ref ? { ref } : {}) }, content), eol);
    const tagCount = parsed.entries.filter((e) => e.form === 'tag').length;
    const next = `${old.replace(/\s+$/, '')}${eol}${eol}${entry}${eol}`;
    // Read back before writing: the new block must come out as the next tag entry, whole.
    const added = parseSpecText(next, file).entries.filter((e) => e.form === 'tag');
    if (added.length !== tagCount + 1 || added[tagCount]!.sid !== escapeAttr(sid)) {
      throw new MaestroError('CORRUPT_FILE', `${file}: the new entry would not read back as entry ${tagCount + 1} of the file (its block structure is not what Maestro expects); nothing was written. Run \`maestro spec health\` and repair the file by hand.`);
    }
    writeFileAtomic(file, next, input.hooks, found ?? null);
    // The new block is the last tag block; legacy entries count after all tag blocks.
    return { outcome: 'created', id: specEntryId(dir, file, tagCount + 1), sid, file, ...(overflowKnowhowId ? { overflowKnowhowId } : {}) };
  });
}

function pick<T extends object, K extends keyof T>(o: T, keys: K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const k of keys) if (o[k] !== undefined && o[k] !== '') out[k] = o[k];
  return out;
}

function editEntry(loc: Located, values: Record<string, string>, hooks?: AtomicWriteHooks): void {
  const text = readFileSync(loc.file, 'utf8');
  writeFileAtomic(loc.file, upsertTagAttributes(text, loc.ordinal, values, loc.file), hooks, text);
}

/** Gives an entry without a sid one, so it can take part in supersession. */
function ensureSid(loc: Located, now: Date): string {
  if (loc.sid) return loc.sid;
  const sid = newSid(now);
  editEntry(loc, { sid });
  loc.sid = sid;
  return sid;
}

export interface SupersedeResult {
  oldId: string;
  newId: string;
  oldSid: string;
  newSid: string;
  replayed: boolean;
}

/**
 * Supersede old → new (FORMATS §1.7). The successor is written first: its
 * `supersedes` is authoritative, so a crash between the two writes already
 * reads as superseded, and running the command again completes the pair.
 */
export function supersedeSpec(root: WorkflowRoot, oldRef: string, newRef: string, opts: { now?: Date; hooks?: AtomicWriteHooks } = {}): SupersedeResult {
  const first = [locateSpecEntry(root, oldRef), locateSpecEntry(root, newRef)];
  return withCorpusLock(first.map((l) => l.file), () => {
    const now = opts.now ?? new Date();
    const oldLoc = locateSpecEntry(root, oldRef);
    const newLoc = locateSpecEntry(root, newRef);
    if (oldLoc.file === newLoc.file && oldLoc.ordinal === newLoc.ordinal) throw new MaestroError('BAD_INPUT', 'An entry cannot supersede itself.');
    // Both checked before either is written: a pair is never left half-written by a refusal.
    assertEditable(oldLoc, oldRef);
    assertEditable(newLoc, newRef);
    for (const l of [oldLoc, newLoc]) if (l.sid) locateSpecEntry(root, l.sid); // a sid two entries carry is refused here
    const oldSid = ensureSid(oldLoc, now);
    const newSidValue = ensureSid(newLoc, now);
    const fresh = (l: Located) => locateSpecEntry(root, l.sid!);
    const o = fresh(oldLoc);
    const n = fresh(newLoc);
    const existingBy = o.attrs['superseded-by'];
    if (existingBy && decodeEntities(existingBy) !== newSidValue) throw new MaestroError('KNOWLEDGE_CONFLICT', `${oldRef} is already superseded by ${existingBy}.`);
    if ((n.attrs['superseded-by'] ?? '') === escapeAttr(oldSid)) throw new MaestroError('KNOWLEDGE_CONFLICT', `${newRef} is itself superseded by ${oldRef}: that would make a cycle.`);
    const list = (n.attrs.supersedes ?? '').split(',').map((s) => s.trim()).filter(Boolean);
    const replayed = list.includes(escapeAttr(oldSid)) && existingBy !== undefined && (o.attrs.status ?? '') === 'deprecated';
    if (!replayed) {
      if (!list.includes(escapeAttr(oldSid))) editEntry(n, { supersedes: [...list, escapeAttr(oldSid)].join(',') }, opts.hooks);
      editEntry(fresh(oldLoc), { status: 'deprecated', 'superseded-by': escapeAttr(newSidValue) }, opts.hooks);
    }
    return { oldId: specEntryId(o.dir, o.file, o.ordinal), newId: specEntryId(n.dir, n.file, n.ordinal), oldSid, newSid: newSidValue, replayed };
  });
}

export function deprecateSpec(root: WorkflowRoot, ref: string): { id: string; replayed: boolean } {
  const loc0 = locateSpecEntry(root, ref);
  return withCorpusLock([loc0.file], () => {
    const loc = locateSpecEntry(root, ref);
    const replayed = loc.attrs.status === 'deprecated';
    if (!replayed) {
      assertEditable(loc, ref);
      editEntry(loc, { status: 'deprecated' });
    }
    return { id: specEntryId(loc.dir, loc.file, loc.ordinal), replayed };
  });
}

/** `CMK-YYYYMMDD-xxxx` conflict marker on an entry (FORMATS §1.7 `markConflict`). */
export function markSpecConflict(root: WorkflowRoot, ref: string, note: string, opts: { confidence?: string; now?: Date } = {}): { id: string; marker: string } {
  const confidence = checkConfidence(opts.confidence ?? 'contested');
  const now = opts.now ?? new Date();
  const loc0 = locateSpecEntry(root, ref);
  return withCorpusLock([loc0.file], () => {
    const loc = locateSpecEntry(root, ref);
    const marker = `CMK-${utcDate(now).replace(/-/g, '')}-${Math.random().toString(36).slice(2, 6)}`;
    const clean = note.replace(/["<>\n]/g, ' ').trim();
    assertEditable(loc, ref);
    editEntry(loc, { confidence, 'conflict-marker': marker, 'conflict-note': clean, 'conflict-date': utcDate(now) });
    return { id: specEntryId(loc.dir, loc.file, loc.ordinal), marker };
  });
}

export { parseAttributes, locateSpecEntry, upsertTagAttributes };
