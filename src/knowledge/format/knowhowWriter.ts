/**
 * Knowhow writers (FORMATS §2.2–2.4): add (with replay-safe explicit ids),
 * supersede and deprecate. Same lock and atomic write as the spec writers.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { MaestroError } from '../../core/errors.js';
import { writeFileAtomic, type AtomicWriteHooks } from './atomic.js';
import { assertFrontmatterClosed, escapeYamlValue, parseFrontmatter } from './frontmatter.js';
import { setFrontmatterLine } from './frontmatterEdit.js';
import { EXPLICIT_ID_RE, KNOWHOW_PREFIX, knowhowIdForStem, parseKnowhowText } from './knowhowParser.js';
import { withCorpusLock } from './lock.js';
import { assertInsideRoot, listKnowhowFiles, type WorkflowRoot } from './root.js';
import { BINARY_CONTENT, binaryContentLine, slugify } from './text.js';

export interface AddKnowhowInput {
  type: string;
  title: string;
  body: string;
  description?: string;
  category?: string;
  keywords?: string[];
  tags?: string[];
  explicitId?: string;
  lang?: string;
  source?: string;
  status?: 'proposed' | 'accepted' | 'superseded';
  specCategory?: string;
  assetType?: string;
  codePaths?: string[];
  tool?: boolean;
  now?: Date;
  hooks?: AtomicWriteHooks;
}

export interface AddKnowhowResult {
  schema: 'knowhow-add-result/1.0';
  operation: 'add';
  id: string;
  filename: string;
  path: string;
  created: string;
  replayed: boolean;
  type: string;
  payloadHash: string;
  message: string;
}

const pad = (n: number) => String(n).padStart(2, '0');
/** Local date, as the other tool names files (FORMATS §2.2). */
function localStamp(d: Date): { ymd: string; hm: string } {
  return { ymd: `${d.getFullYear()}${pad(d.getMonth() + 1)}${pad(d.getDate())}`, hm: `${pad(d.getHours())}${pad(d.getMinutes())}` };
}

function normBody(body: string): string {
  return `${body.replace(/\r\n?/g, '\n').replace(/\n+$/, '')}\n`;
}

/** Trimmed, non-empty, distinct, in localeCompare order; null when nothing is left (as maestro-flow compares them). */
function stringSet(xs: readonly string[] | undefined): string[] | null {
  const out = [...new Set((xs ?? []).map((x) => x.trim()).filter(Boolean))].sort((a, b) => a.localeCompare(b));
  return out.length ? out : null;
}

/**
 * `sha256:<hex>` of the canonical payload; equal payloads make an explicit-id add a replay (FORMATS §2.3).
 * Keywords and tags are compared as written (trimmed, not case-folded): a file's keywords are read back
 * exactly, so replaying `knowhow add --id` with capitalised keywords is a replay, as in maestro-flow.
 */
export function knowhowPayloadHash(i: AddKnowhowInput): string {
  const payload = {
    type: i.type,
    category: i.category ?? null,
    title: i.title,
    description: i.description ?? null,
    keywords: stringSet(i.keywords),
    tags: stringSet(i.tags),
    body: normBody(i.body),
    explicitId: i.explicitId?.trim().toLowerCase() ?? null,
  };
  return `sha256:${createHash('sha256').update(JSON.stringify(payload)).digest('hex')}`;
}

export function renderKnowhowDocument(i: AddKnowhowInput, created: string): string {
  const l: string[] = ['---', `title: ${escapeYamlValue(i.title)}`];
  if (i.description) l.push(`description: ${escapeYamlValue(i.description)}`);
  l.push(`type: ${i.type}`);
  if (i.category) l.push(`category: ${escapeYamlValue(i.category)}`);
  if (i.explicitId) l.push(`explicitId: ${i.explicitId.toLowerCase()}`);
  l.push(`created: ${created}`);
  l.push('keywords:', ...(i.keywords ?? []).map((k) => `  - ${escapeYamlValue(k)}`));
  l.push('tags:', ...(i.tags ?? []).map((t) => `  - ${escapeYamlValue(t)}`));
  if (i.type === 'template' && i.lang) l.push(`lang: ${escapeYamlValue(i.lang)}`);
  if (i.type === 'reference' && i.source) l.push(`source: ${escapeYamlValue(i.source)}`);
  if (i.type === 'decision' && i.status) l.push(`status: ${i.status}`);
  if (i.specCategory) l.push(`specCategory: ${i.specCategory}`);
  if (i.type === 'asset' && i.assetType) l.push(`assetType: ${escapeYamlValue(i.assetType)}`);
  if (i.type === 'asset' || i.type === 'blueprint') l.push('codePaths:', ...(i.codePaths ?? []).map((p) => `  - ${escapeYamlValue(p)}`));
  if (i.tool) l.push('tool: true');
  l.push('---', '');
  return `${l.join('\n')}\n${normBody(i.body)}`;
}

/** The file of an explicit id (FORMATS §2.2): uppercase prefix + the rest + `.md`. */
export function explicitIdFileName(id: string): string {
  return `${id.slice(0, 3).toUpperCase()}${id.slice(3).toLowerCase()}.md`;
}

export function addKnowhow(root: WorkflowRoot, input: AddKnowhowInput): AddKnowhowResult {
  const prefix = KNOWHOW_PREFIX[input.type];
  if (!prefix) throw new MaestroError('BAD_INPUT', `knowhow type "${input.type}" must be one of ${Object.keys(KNOWHOW_PREFIX).join('|')}.`);
  const title = input.title.trim();
  if (!title) throw new MaestroError('BAD_INPUT', 'A knowhow document needs a title.');
  const now = input.now ?? new Date();
  const dir = join(root.workflowDir, 'knowhow');
  let fileName: string;
  if (input.explicitId) {
    const id = input.explicitId.toLowerCase();
    if (!EXPLICIT_ID_RE.test(id)) throw new MaestroError('BAD_INPUT', `explicit id "${input.explicitId}" must look like tip-20260427-my-slug.`);
    if (id.slice(0, 3).toUpperCase() !== prefix) throw new MaestroError('BAD_INPUT', `explicit id "${input.explicitId}" has prefix ${id.slice(0, 3)} but type ${input.type} needs ${prefix.toLowerCase()}.`);
    fileName = explicitIdFileName(id);
  } else {
    const { ymd, hm } = localStamp(now);
    const slug = slugify(title).slice(0, 40).replace(/-+$/, '');
    fileName = slug ? `${prefix}-${ymd}-${slug}.md` : `${prefix}-${ymd}-${hm}.md`;
  }
  const hash = knowhowPayloadHash(input);
  // Before the lock, which creates files beside the target; the numbered name is checked again below.
  assertInsideRoot(root, join(dir, fileName));
  return withCorpusLock([join(dir, fileName)], () => {
    let name = fileName;
    if (existsSync(join(dir, name))) {
      if (input.explicitId) {
        const existing = readFileSync(join(dir, name), 'utf8');
        const doc = parseKnowhowText(existing, name);
        const replay: AddKnowhowInput = { type: doc.type, title: doc.title, body: doc.body, keywords: doc.keywords, tags: doc.tags, explicitId: doc.explicitId ?? '', ...(doc.description ? { description: doc.description } : {}), ...(doc.category ? { category: doc.category } : {}) };
        if (knowhowPayloadHash(replay) !== hash) throw new MaestroError('KNOWLEDGE_CONFLICT', `knowhow ${input.explicitId} already exists with different content (${name}).`);
        return result(name, doc.created ?? '', true);
      }
      // Same title on the same day: keep both, numbered.
      for (let n = 2; existsSync(join(dir, name)); n++) name = fileName.replace(/\.md$/, `-${n}.md`);
    }
    const target = join(dir, name);
    assertInsideRoot(root, target);
    const created = now.toISOString();
    writeFileAtomic(target, renderKnowhowDocument(input, created), input.hooks, null);
    return result(name, created, false);
  });

  function result(name: string, created: string, replayed: boolean): AddKnowhowResult {
    const id = knowhowIdForStem(name.replace(/\.md$/, ''));
    return { schema: 'knowhow-add-result/1.0', operation: 'add', id, filename: name, path: `knowhow/${name}`, created, replayed, type: input.type, payloadHash: hash, message: replayed ? `${id} already exists with the same content` : `created ${id}` };
  }
}

/**
 * Finds a knowhow file by canonical id, explicit id, `knowhow:` graph id or file stem, to change it:
 * a file a symbolic link leads out of the root is refused here, before any lock is taken.
 */
export function locateKnowhow(root: WorkflowRoot, ref: string): { file: string; id: string } {
  const want = ref.toLowerCase().replace(/^knowhow:/, '');
  const found = (file: string, id: string) => {
    assertInsideRoot(root, file);
    return { file, id };
  };
  for (const file of listKnowhowFiles(join(root.workflowDir, 'knowhow'))) {
    const stem = basename(file, '.md');
    const id = knowhowIdForStem(stem);
    if (id === want || stem.toLowerCase() === want || `knowhow-${stem.toLowerCase()}` === want) return found(file, id);
    const doc = parseKnowhowText(readFileSync(file, 'utf8'), file);
    if (doc.explicitId && doc.explicitId === want) return found(file, id);
  }
  throw new MaestroError('UNKNOWN_KNOWLEDGE_ID', `No knowhow document "${ref}" in ${join(root.workflowDir, 'knowhow')}.`);
}

/**
 * Replaces `key: …` in the frontmatter in place, or inserts it before the closing `---` (FORMATS §2.4).
 * A key that already holds `value` keeps its line as written (a bare `status: deprecated` is not requoted).
 */
export function setFrontmatterKey(text: string, key: string, value: unknown): string {
  if (isDeepStrictEqual(parseFrontmatter(text).data[key], value)) return text;
  return setFrontmatterLine(text, key, JSON.stringify(value));
}

/**
 * For a lifecycle rewrite: refuses a file that is not text (NUL or bytes that are not UTF-8, the check the
 * spec parser and spec append make): written back, those bytes would become U+FFFD.
 */
function assertKnowhowText(text: string, file: string): void {
  const line = binaryContentLine(text);
  if (line === undefined) return;
  throw new MaestroError('CORRUPT_FILE', `Cannot change knowhow ${file}:${line}: ${BINARY_CONTENT}, which rewriting it would replace with U+FFFD. Repair or remove the file by hand; nothing was written.`, { details: { file, line } });
}

export function supersedeKnowhow(root: WorkflowRoot, oldRef: string, newRef: string, opts: { hooks?: AtomicWriteHooks } = {}): { oldId: string; newId: string; replayed: boolean } {
  const o0 = locateKnowhow(root, oldRef);
  const n0 = locateKnowhow(root, newRef);
  if (o0.file === n0.file) throw new MaestroError('BAD_INPUT', 'A knowhow document cannot supersede itself.');
  return withCorpusLock([o0.file, n0.file], () => {
    const oldText0 = readFileSync(o0.file, 'utf8');
    const newText = readFileSync(n0.file, 'utf8');
    // Both checked before either is written.
    // maestro-flow's lifecycle refuses the same files ("unterminated YAML frontmatter").
    assertFrontmatterClosed(oldText0, o0.file, 'knowhow');
    assertFrontmatterClosed(newText, n0.file, 'knowhow');
    assertKnowhowText(oldText0, o0.file);
    assertKnowhowText(newText, n0.file);
    const oldDoc = parseKnowhowText(oldText0, o0.file);
    const newDoc = parseKnowhowText(newText, n0.file);
    if (oldDoc.supersededBy && oldDoc.supersededBy !== n0.id) throw new MaestroError('KNOWLEDGE_CONFLICT', `${o0.id} is already superseded by ${oldDoc.supersededBy}.`);
    if (newDoc.supersededBy === o0.id || oldDoc.supersedes.includes(n0.id)) throw new MaestroError('KNOWLEDGE_CONFLICT', `${n0.id} is superseded by ${o0.id}: that would make a cycle.`);
    const complete = newDoc.supersedes.includes(o0.id) && oldDoc.supersededBy === n0.id && oldDoc.status === 'deprecated';
    if (!complete) {
      // Successor first: its `supersedes` is authoritative, so a crash here already reads as superseded.
      if (!newDoc.supersedes.includes(o0.id)) writeFileAtomic(n0.file, setFrontmatterKey(newText, 'supersedes', [...new Set([...newDoc.supersedes, o0.id])].sort()), opts.hooks, newText);
      const oldRead = readFileSync(o0.file, 'utf8');
      writeFileAtomic(o0.file, setFrontmatterKey(setFrontmatterKey(oldRead, 'status', 'deprecated'), 'supersededBy', n0.id), opts.hooks, oldRead);
    }
    return { oldId: o0.id, newId: n0.id, replayed: complete };
  });
}

export function deprecateKnowhow(root: WorkflowRoot, ref: string): { id: string; replayed: boolean } {
  const loc = locateKnowhow(root, ref);
  return withCorpusLock([loc.file], () => {
    const text = readFileSync(loc.file, 'utf8');
    assertFrontmatterClosed(text, loc.file, 'knowhow');
    assertKnowhowText(text, loc.file);
    if (parseKnowhowText(text, loc.file).status === 'deprecated') return { id: loc.id, replayed: true };
    writeFileAtomic(loc.file, setFrontmatterKey(text, 'status', 'deprecated'), {}, text);
    return { id: loc.id, replayed: false };
  });
}
