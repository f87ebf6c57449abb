/**
 * Writing knowledge entries (FORMATS §8.4). A create allocates the next id
 * and never overwrites a file; an update re-reads the file, refuses when its
 * frontmatter does not parse cleanly (nothing is overwritten by mistake), and
 * changes only version, updated, tags, sources, intent_key,
 * extraction_confidence and the `## 解决方案` section: every other line a
 * person wrote (comments, blank lines, unknown keys, quoting, CRLF) stays.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MaestroError } from '../../core/errors.js';
import { redactSecrets } from '../../core/redact.js';
import { allocateEntryId, entryVersion, parseEntryFile, type Facet, type WikiEntry } from '../../knowledge/format/wiki/entries.js';
import { parseFrontmatter, type FrontValue } from '../../knowledge/format/frontmatter.js';
import { editFrontmatter, renderFrontmatter } from '../../knowledge/format/frontmatterEdit.js';
import { TYPE_DIR, wikiLayout, writeFileAtomic } from '../../knowledge/format/wiki/layout.js';
import { BINARY_CONTENT, binaryContentLine } from '../../knowledge/format/text.js';
import { ensureScopeTags } from './scope.js';
import { SLUG_PATTERN } from '../text.js';

const SLUG_MAX = 120;

export interface EntryDraft {
  type: 'context' | 'entity';
  slug: string;
  request: string;
  title?: string;
  summary: string;
  context?: string;
  solution: string;
  tags?: string[];
  facet?: Facet;
  confidence?: number;
  /** For facet `command`: the command to show in a bash fence. */
  command?: string;
  /** Why the model chose to persist (`## 落盘说明（模型）`). */
  persistNote?: string;
  references?: string[];
}

export interface WriteContext {
  wikiRoot: string;
  projectSlug: string;
  source: { sessionId: string; explorationId: string };
  intentKey?: string;
  now: Date;
  /** Test seam: called with the new text beside the entry, before it replaces it. */
  beforeRename?: () => void;
}

function isoSeconds(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function renderBody(draft: EntryDraft): string {
  const out = [`# ${draft.title ?? draft.request}`, '', '## 问题', '', draft.request, '', '## 摘要', '', draft.summary, ''];
  if (draft.context) out.push('## 上下文', '', draft.context, '');
  out.push('## 解决方案', '', draft.solution || '(none recorded)', '');
  if (draft.persistNote) out.push('## 落盘说明（模型）', '', draft.persistNote, '');
  if (draft.facet === 'protocol') out.push('## 协议', '', draft.solution, '');
  if (draft.facet === 'command' && draft.command) out.push('## 命令', '', '```bash', draft.command, '```', '');
  if (draft.facet === 'failure') out.push('## 失败记录', '', draft.summary, '');
  if (draft.references?.length) out.push('## 参考', '', ...draft.references.map((r) => `- ${r}`), '');
  return out.join('\n');
}

/**
 * The draft with secrets redacted from every text it writes (core/redact.ts). The
 * transcript was redacted when it was read, but an agent's draft may hold what the
 * agent read itself (a `.env` it opened with its read-only tools): entries are
 * meant to be committed, so nothing secret-shaped reaches one.
 */
export function redactDraft<T extends Partial<EntryDraft>>(draft: T): T {
  const out: Partial<EntryDraft> = { ...draft };
  for (const key of ['request', 'title', 'summary', 'context', 'solution', 'command', 'persistNote'] as const) {
    const value = out[key];
    if (typeof value === 'string') out[key] = redactSecrets(value);
  }
  if (out.references) out.references = out.references.map(redactSecrets);
  return out as T;
}

export function validateSlug(slug: string): boolean {
  return slug.length <= SLUG_MAX && SLUG_PATTERN.test(slug);
}

/** Creates a new entry file; returns it as parsed back from disk. */
export function createEntry(raw: EntryDraft, ctx: WriteContext): WikiEntry {
  const draft = redactDraft(raw);
  if (!validateSlug(draft.slug)) throw new MaestroError('BAD_INPUT', `invalid_slug: "${draft.slug}" must match ^[a-z0-9]+(-[a-z0-9]+)*$ and be ≤${SLUG_MAX} chars`);
  const layout = wikiLayout(ctx.wikiRoot);
  const id = allocateEntryId(ctx.wikiRoot, draft.type);
  const dir = draft.type === 'context' && ctx.intentKey ? join(layout.knowledge, TYPE_DIR.context, ctx.intentKey) : join(layout.knowledge, TYPE_DIR[draft.type]);
  const path = join(dir, `${id}-${draft.slug}.md`);
  if (existsSync(path)) throw new MaestroError('INTERNAL', `${path} already exists; refusing to overwrite it.`);
  const stamp = isoSeconds(ctx.now);
  const fm = renderFrontmatter({
    id,
    slug: draft.slug,
    request: draft.request,
    created: stamp,
    updated: stamp,
    version: 1,
    type: draft.type,
    category: TYPE_DIR[draft.type],
    facet: draft.facet,
    tags: ensureScopeTags(draft.tags ?? [], ctx.projectSlug),
    related: [],
    aliases: [],
    source: { session_id: ctx.source.sessionId, exploration_id: ctx.source.explorationId },
    sources: [{ session_id: ctx.source.sessionId, exploration_id: ctx.source.explorationId, saved_at: stamp }],
    extraction_confidence: draft.confidence ?? 0.5,
    status: 'draft',
    intent_key: ctx.intentKey,
  });
  const text = `${fm}\n\n${renderBody(draft)}`;
  writeFileAtomic(path, text, { root: ctx.wikiRoot, readAs: null, ...(ctx.beforeRename ? { beforeRename: ctx.beforeRename } : {}) });
  const parsed = parseEntryFile(path, layout.knowledge, text, { mtimeMs: Date.now(), size: text.length });
  if (!parsed.entry) throw new MaestroError('INTERNAL', `wrote ${path} but could not read it back: ${parsed.problems.map((p) => p.reason).join('; ')}`);
  return parsed.entry;
}

/**
 * The body with `block` added at the end of its `## 解决方案` section, or in a new one at the end. What is added
 * uses the file's line break `eol`; the lines already there keep theirs.
 */
function withSolutionUpdate(body: string, block: string, eol: string): string {
  const added = (s: string) => s.replace(/\n/g, eol);
  const heading = /^##\s+解决方案\s*$/m.exec(body);
  if (!heading) return `${body.replace(/\s*$/, '')}${added(`\n\n## 解决方案\n\n${block}`)}`;
  const after = heading.index + heading[0].length;
  const next = /^##\s+/m.exec(body.slice(after));
  const insertAt = next ? after + next.index : body.length;
  return `${body.slice(0, insertAt).replace(/\s*$/, '')}${added(`\n\n${block}\n`)}${body.slice(insertAt)}`;
}

/**
 * A key's value as a list whose items are the person's values as written: a list as it is, nothing (absent, or
 * `key:` alone) as none, any other value as the first item. `sources: "imported from GA run 7"` was replaced by a
 * fresh list, the person's text gone; GUI-Anything leaves such a line alone (its update only appends to a block list).
 */
function asList(value: FrontValue | undefined): FrontValue[] {
  if (Array.isArray(value)) return [...value];
  return value === undefined || value === null ? [] : [value];
}

/** The tags as written, a number or a boolean kept as one (`[a, 2024]` was rewritten with "2024"); a text is split at commas, as the reader splits it. */
function writtenTags(value: FrontValue | undefined): FrontValue[] {
  return typeof value === 'string' ? value.split(',').map((t) => t.trim()).filter(Boolean) : asList(value);
}

/** `tags` with each of `added` it does not hold (as text), then the project's scope tag if it needs one; the tags there stay as they are. */
function withTags(tags: FrontValue[], added: readonly string[], projectSlug: string): FrontValue[] {
  const names = new Set(tags.map(tagText));
  const out = [...tags, ...added.filter((t) => !names.has(t) && Boolean(names.add(t)))];
  const texts = out.map(tagText);
  return [...out, ...ensureScopeTags(texts, projectSlug).slice(texts.length)];
}

function tagText(tag: FrontValue): string {
  return typeof tag === 'string' ? tag : JSON.stringify(tag);
}

/** Updates an entry in place: version+1, updated, one sources item per exploration, scope tags, a dated block in 解决方案. */
export function updateEntry(target: WikiEntry, raw: Pick<EntryDraft, 'solution' | 'tags' | 'confidence'>, ctx: WriteContext): WikiEntry {
  const draft = redactDraft(raw);
  const text = readFileSync(target.path, 'utf8');
  const doc = parseFrontmatter(text, { dialect: 'wiki' });
  // Bytes that are not UTF-8 would be written back as U+FFFD: refused like a spec append refuses them.
  const binaryLine = binaryContentLine(text);
  const problem = doc.problems[0] ?? (binaryLine === undefined ? undefined : { line: binaryLine, message: BINARY_CONTENT });
  if (!doc.present || problem) {
    const where = problem ? `line ${problem.line}: ${problem.message}` : 'no frontmatter';
    throw new MaestroError('CORRUPT_FILE', `target_unreadable: ${target.path} (${where}); not updating it.`, { details: { file: target.path } });
  }
  const data = doc.data;
  const stamp = isoSeconds(ctx.now);
  const sources = asList(data.sources);
  const already = sources.some((s) => s && typeof s === 'object' && !Array.isArray(s) && s.exploration_id === ctx.source.explorationId && s.session_id === ctx.source.sessionId);
  if (!already) sources.push({ session_id: ctx.source.sessionId, exploration_id: ctx.source.explorationId, saved_at: stamp });
  const raise = draft.confidence !== undefined && (typeof data.extraction_confidence !== 'number' || draft.confidence > data.extraction_confidence);
  // Only these keys are set; every other line of the block (comments, blank lines, keys we do not know) stays as written.
  const { head, body, eol } = editFrontmatter(text, {
    version: entryVersion(data.version) + 1,
    updated: stamp,
    tags: withTags(writtenTags(data.tags), draft.tags ?? [], ctx.projectSlug),
    sources,
    intent_key: ctx.intentKey || undefined,
    extraction_confidence: raise ? draft.confidence : undefined,
  });
  const block = `### 更新 ${stamp.slice(0, 10)} (${ctx.source.explorationId})\n\n${draft.solution.trim()}\n`;
  const updated = withSolutionUpdate(body, block, eol);
  const out = `${head}${/^\r?\n/.test(updated) ? '' : eol}${updated}`;
  writeFileAtomic(target.path, out, { root: ctx.wikiRoot, readAs: text, ...(ctx.beforeRename ? { beforeRename: ctx.beforeRename } : {}) });
  const parsed = parseEntryFile(target.path, wikiLayout(ctx.wikiRoot).knowledge, out, { mtimeMs: Date.now(), size: out.length });
  if (!parsed.entry) throw new MaestroError('INTERNAL', `updated ${target.path} but could not read it back`);
  return parsed.entry;
}
