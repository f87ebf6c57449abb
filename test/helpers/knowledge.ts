/** Temporary workflow roots for the knowledge suites; removed after each test. */
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach } from 'vitest';
import { resolveWorkflowRoot, type WorkflowRoot } from '../../src/knowledge/format/root.js';

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

export interface TempRoot {
  dir: string;
  root: WorkflowRoot;
}

/** A project folder with an empty `.workflow/`, confined (as with --workflow-root). */
export function tempRoot(fixture?: string): TempRoot {
  const dir = mkdtempSync(join(tmpdir(), 'maestro-knowledge-'));
  made.push(dir);
  if (fixture) cpSync(join(import.meta.dirname, '..', 'fixtures', 'knowledge', fixture), dir, { recursive: true });
  mkdirSync(join(dir, '.workflow'), { recursive: true });
  return { dir, root: resolveWorkflowRoot({ workflowRoot: dir, env: { ...process.env, MAESTRO_HOME: join(dir, '.home') } }) };
}

/** Writes a knowhow file directly (fast; the writers have their own suite). */
export function writeKnowhowFile(root: WorkflowRoot, stem: string, fields: { title: string; tags?: string[]; category?: string; status?: string; supersedes?: string[] }, body: string): string {
  const dir = join(root.workflowDir, 'knowhow');
  mkdirSync(dir, { recursive: true });
  const type = { RCP: 'recipe', DCS: 'decision', REF: 'reference', TPL: 'template', DOC: 'document' }[stem.slice(0, 3)] ?? 'tip';
  const lines = ['---', `title: ${JSON.stringify(fields.title)}`, `type: ${type}`, `created: 2026-08-01T00:00:00.000Z`];
  if (fields.category) lines.push(`category: ${fields.category}`);
  if (fields.tags) lines.push(`tags: [${fields.tags.join(', ')}]`);
  if (fields.status) lines.push(`status: ${fields.status}`);
  if (fields.supersedes) lines.push(`supersedes: ${JSON.stringify(fields.supersedes)}`);
  lines.push('---', '', body, '');
  const path = join(dir, `${stem}.md`);
  writeFileSync(path, lines.join('\n'));
  return `knowhow-${stem.toLowerCase()}`;
}

const FILLER_WORDS = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu'.split(' ');

/**
 * Unrelated filler documents. SQLite's BM25 clamps the idf of a term found in
 * more than half the documents to ~0, so ranking suites need a corpus where
 * their query terms are rare, as they are in a real one.
 */
export function writeFiller(root: WorkflowRoot, n: number): void {
  for (let i = 0; i < n; i++) {
    const words = Array.from({ length: 12 }, (_, j) => FILLER_WORDS[(i * 7 + j * 3) % FILLER_WORDS.length]).join(' ');
    writeKnowhowFile(root, `TIP-20260801-filler-${i}`, { title: `Filler ${FILLER_WORDS[i % FILLER_WORDS.length]} ${i}` }, words);
  }
}

export interface WikiFields {
  id: string;
  request: string;
  type?: 'context' | 'entity' | 'summary';
  tags?: string[];
  intentKey?: string;
  status?: string;
  updated?: string;
  related?: string[];
}

/** An entry file as the observer's writer lays it out (FORMATS §8.4). */
export function writeWikiEntry(dir: string, rel: string, f: WikiFields, title: string, summary: string, body: string): string {
  const path = join(dir, 'wiki', 'knowledge', rel);
  mkdirSync(dirname(path), { recursive: true });
  const lines = [
    '---',
    `id: "${f.id}"`,
    `slug: "${rel.split('/').pop()!.replace(/\.md$/, '').replace(/^[CNS]\d{3}-/, '')}"`,
    `request: ${JSON.stringify(f.request)}`,
    `created: "2026-08-01T00:00:00.000Z"`,
    `updated: "${f.updated ?? '2026-08-01T00:00:00.000Z'}"`,
    'version: 1',
    `type: ${f.type ?? 'context'}`,
    'tags:',
    ...(f.tags ?? []).map((t) => `  - "${t}"`),
    `related: [${(f.related ?? []).join(', ')}]`,
    'aliases: []',
    'source:',
    '  session_id: "s1"',
    '  exploration_id: "exp_1"',
    'extraction_confidence: 0.8',
    `status: "${f.status ?? 'active'}"`,
    ...(f.intentKey ? [`intent_key: "${f.intentKey}"`] : []),
    '---',
    '',
    `# ${title}`,
    '',
    '## 摘要',
    summary,
    '',
    '## 解决方案',
    body,
    '',
  ];
  writeFileSync(path, lines.join('\n'));
  return path;
}
