/**
 * The wiki's folders (FORMATS §8.1), and the write every wiki and bundle file
 * goes through (the one atomic write of src/lib/atomicWrite.ts).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { writeFileAtomic as atomicWrite } from '../../../lib/atomicWrite.js';
import { assertNoLinkOut } from '../linkGuard.js';

export const ENTRY_TYPES = ['context', 'entity', 'summary'] as const;
export type EntryType = (typeof ENTRY_TYPES)[number];

export const TYPE_DIR: Record<EntryType, string> = { context: 'contexts', entity: 'entities', summary: 'summaries' };
export const TYPE_PREFIX: Record<EntryType, string> = { context: 'C', entity: 'N', summary: 'S' };
/** Engineering-era folders the layout no longer has (FORMATS §8.1). */
export const LEGACY_DIRS = ['errors', 'snippets', 'decisions'] as const;

export interface WikiLayout {
  root: string;
  knowledge: string;
  sessions: string;
  notes: string;
  audit: string;
  auditResolved: string;
  log: string;
  index: string;
  sessionIndex: string;
}

export function wikiLayout(root: string): WikiLayout {
  const knowledge = join(root, 'knowledge');
  return {
    root,
    knowledge,
    sessions: join(root, 'sessions'),
    notes: join(root, 'notes'),
    audit: join(knowledge, 'audit'),
    auditResolved: join(knowledge, 'audit', 'resolved'),
    log: join(knowledge, 'log'),
    index: join(knowledge, 'index.md'),
    sessionIndex: join(root, 'sessions', '_index.json'),
  };
}

export function bundlePath(layout: WikiLayout, sessionId: string): string {
  return join(layout.sessions, sessionId, 'bundle.json');
}

/**
 * Creates the folder and writes atomically. `durable: false` skips the fsyncs
 * (still tmp + rename, so still atomic for readers) for derived files that can
 * be rebuilt, such as `sessions/_index.json`: after a power loss such a file
 * may be older or empty, never torn in a way a reader would trust.
 *
 * `private`: the file is the owner's only (0600, and a folder it creates 0700), for what
 * holds a person's prompts and answers (`sessions/`), whatever the umask says.
 *
 * `root`: the wiki the file belongs to. The wiki is the workspace's `./wiki`, which a repository can hold: a
 * folder on the way that is a link out of it (`wiki/sessions -> ../docs`, `knowledge/entities -> ~/x`) is
 * refused before anything is made, or a new entry, or a session's prompts, were written where it led.
 *
 * `readAs`: the text an entry's rewrite was made from (null: a new file), so that a person's save of the page
 * meanwhile is kept (KNOWLEDGE_CONFLICT; src/lib/atomicWrite.ts). `beforeRename`: a test seam.
 */
export function writeFileAtomic(path: string, content: string, options: { root: string; durable?: boolean; private?: boolean; readAs?: string | null; beforeRename?: () => void }): void {
  assertNoLinkOut(options.root, path, `the wiki ${options.root}`);
  // Only the folder itself is made private; the folders above it keep the umask's mode.
  if (options.private && !existsSync(dirname(path))) {
    mkdirSync(dirname(dirname(path)), { recursive: true });
    mkdirSync(dirname(path), { mode: 0o700 });
  }
  atomicWrite(path, content, {
    mkdir: true,
    ...(options.durable === false ? { durable: false } : {}),
    ...(options.private ? { mode: 0o600 } : {}),
    ...(options.readAs !== undefined ? { readAs: options.readAs } : {}),
    ...(options.beforeRename ? { beforeRename: options.beforeRename } : {}),
  });
}

const SCHEMA_MD = `# Wiki schema

Entries live in \`contexts/<intent_key>/C###-<slug>.md\`, \`entities/N###-<slug>.md\` and
\`summaries/S###-<slug>.md\`. Required frontmatter: id, slug, request, type, category, tags,
source, version, status. Optional: intent_key, facet, evolution_parent, related.
Body sections: ## 问题, ## 摘要, ## 上下文, ## 解决方案 (+ ## 落盘说明（模型）, ## 协议, ## 命令, ## 失败记录, ## 参考).
Project scope: tag \`proj:<slug>\`, or \`scope:global\` / \`scope:shared\` to share across projects.
`;

/**
 * Creates the folders the layout promises (one contexts/<key>/ per intent key,
 * plus greeting) and SCHEMA.md when missing. Never deletes anything: leftover
 * legacy folders are for `maestro wiki maintain` / `migrate` to move aside.
 */
export function ensureWikiLayout(root: string, intentKeys: readonly string[]): void {
  const l = wikiLayout(root);
  mkdirSync(l.root, { recursive: true });
  if (!existsSync(l.sessions)) mkdirSync(l.sessions, { mode: 0o700 });
  for (const dir of [l.notes, l.audit, l.log, join(l.knowledge, TYPE_DIR.entity), join(l.knowledge, TYPE_DIR.summary)]) mkdirSync(dir, { recursive: true });
  for (const key of new Set([...intentKeys, 'greeting'])) mkdirSync(join(l.knowledge, TYPE_DIR.context, key), { recursive: true });
  const schema = join(l.knowledge, 'SCHEMA.md');
  if (!existsSync(schema)) writeFileAtomic(schema, SCHEMA_MD, { root });
}
