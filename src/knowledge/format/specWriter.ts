/**
 * Spec writers: append, supersede, deprecate, mark a conflict. Every one is a
 * lock-guarded atomic read-modify-write (lock.ts, atomic.ts): the file is read
 * under the lock, so two writers never overwrite each other's entries.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { MaestroError } from '../../core/errors.js';
import { writeFileAtomic, type AtomicWriteHooks } from './atomic.js';
import { specEntryId } from './corpus.js';
import { addKnowhow } from './knowhowWriter.js';
import { withCorpusLock } from './lock.js';
import { assertInsideRoot, listSpecFiles, specDirs, type SpecDir, type WorkflowRoot } from './root.js';
import { renderSeed } from './seeds.js';
import { CATEGORY_MAP, CONFIDENCE_LEVELS, MAX_SPEC_ENTRY_SIZE, isCategory, isConfidence, parseAttributes, parseSpecText, type SpecCategory, type SpecConfidence } from './specParser.js';
import { decodeEntities, escapeAttr } from './text.js';

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
    const old = existsSync(file) ? readFileSync(file, 'utf8') : renderSeed(fileName, input.category);
    const sid = input.sid ?? unusedSid(now, dir.dir, file, old);
    const parsed = parseSpecText(old, file);
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
    const entry = formatSpecEntry({ category: input.category, keywords, date: utcDate(now), sid, title, ...pick(input, ['description', 'source', 'confidence']), ...(ref ? { ref } : {}) }, content);
    const tagCount = parsed.entries.filter((e) => e.form === 'tag').length;
    writeFileAtomic(file, `${old.replace(/\s+$/, '')}\n\n${entry}\n`, input.hooks);
    // The new block is the last tag block; legacy entries count after all tag blocks.
    return { outcome: 'created', id: specEntryId(dir, file, tagCount + 1), sid, file, ...(overflowKnowhowId ? { overflowKnowhowId } : {}) };
  });
}

function pick<T extends object, K extends keyof T>(o: T, keys: K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const k of keys) if (o[k] !== undefined && o[k] !== '') out[k] = o[k];
  return out;
}

interface Located {
  file: string;
  dir: SpecDir;
  ordinal: number;
  sid: string | undefined;
  attrs: Record<string, string>;
}

/**
 * Finds a tag entry by sid, `spec:<sid>` or canonical id in the writable spec dirs, to change it:
 * a file a symbolic link leads out of the root is refused here, before any lock is taken.
 */
export function locateSpecEntry(root: WorkflowRoot, ref: string): Located {
  const sidRef = ref.startsWith('spec:S-') ? ref.slice(5) : ref;
  for (const dir of specDirs(root).filter((d) => d.writable)) {
    for (const file of listSpecFiles(dir.dir)) {
      const parsed = parseSpecText(readFileSync(file, 'utf8'), file);
      for (const e of parsed.entries) {
        if (e.form !== 'tag') continue;
        if ((e.sid && e.sid === sidRef) || specEntryId(dir, file, e.ordinal) === ref) {
          assertInsideRoot(root, file);
          return { file, dir, ordinal: e.ordinal, sid: e.sid, attrs: e.attrs };
        }
      }
    }
  }
  throw new MaestroError('UNKNOWN_KNOWLEDGE_ID', `No spec entry with sid or id "${ref}" in the writable spec folders (legacy heading entries cannot be changed this way).`);
}

/**
 * Sets attributes on the opening tag of the `ordinal`-th block in `text`:
 * an existing ` name="…"` is replaced in place, a new one goes before `>`.
 * Works on the whole opening tag, so tags spanning lines are handled.
 */
export function upsertTagAttributes(text: string, ordinal: number, values: Record<string, string>): string {
  const re = /<spec-entry\s+([^>]+)>([\s\S]*?)<\/spec-entry>/g;
  let n = 0;
  for (const m of text.matchAll(re)) {
    if (++n !== ordinal) continue;
    const start = m.index!;
    const openLen = m[0].indexOf('>') + 1;
    let tag = m[0].slice(0, openLen);
    for (const [name, value] of Object.entries(values)) {
      const attr = new RegExp(`(\\s)${name}="[^"]*"`);
      const rendered = `${name}="${value}"`;
      tag = attr.test(tag) ? tag.replace(attr, `$1${rendered}`) : tag.replace(/\s*>$/, ` ${rendered}>`);
    }
    return text.slice(0, start) + tag + text.slice(start + openLen);
  }
  throw new MaestroError('INTERNAL', `spec entry ${ordinal} vanished while editing`);
}

function editEntry(loc: Located, values: Record<string, string>, hooks?: AtomicWriteHooks): void {
  const text = readFileSync(loc.file, 'utf8');
  writeFileAtomic(loc.file, upsertTagAttributes(text, loc.ordinal, values), hooks);
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
    if (!replayed) editEntry(loc, { status: 'deprecated' });
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
    editEntry(loc, { confidence, 'conflict-marker': marker, 'conflict-note': clean, 'conflict-date': utcDate(now) });
    return { id: specEntryId(loc.dir, loc.file, loc.ordinal), marker };
  });
}

export { parseAttributes };
