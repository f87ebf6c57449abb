import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { tempRoot, writeKnowhowFile } from '../../../test/helpers/knowledge.js';
import { INDEX_FILE } from '../index/store.js';
import { openKnowledge } from '../knowledge.js';
import { appendSpecEntry } from './specWriter.js';

/** A spec file whose second and third entries carry the same sid; the lines of their opening tags. */
function duplicatedSid(): { dir: string; file: string; lines: number[] } {
  const { root, dir } = tempRoot();
  const first = appendSpecEntry(root, { category: 'coding', title: 'First', content: 'First rule.', keywords: ['a'] });
  const dup = (title: string) => `<spec-entry category="coding" keywords="x" date="2026-01-01" sid="S-20260101-dupe" title="${title}">\n\n### ${title}\n\nBody.\n\n</spec-entry>\n`;
  writeFileSync(first.file, `${readFileSync(first.file, 'utf8')}\n${dup('One')}\n${dup('Two')}`);
  const lines = readFileSync(first.file, 'utf8').split('\n').flatMap((l, i) => (l.includes('S-20260101-dupe') ? [i + 1] : []));
  return { dir, file: first.file, lines };
}

describe('spec health', () => {
  it('reports a sid carried by two entries as an error on each, naming the other place', () => {
    const { dir, file, lines } = duplicatedSid();
    const k = openKnowledge({ env: process.env, workflowRoot: dir });
    try {
      const h = k.health('spec');
      expect(h).toMatchObject({ ok: false, entries: 3, errors: 2 });
      expect(h.findings.map((f) => [f.file, f.line, f.severity, f.code, f.message])).toEqual([
        [file, lines[0], 'error', 'duplicate-sid', `spec:project:coding-conventions-002 carries sid "S-20260101-dupe", as does ${file}:${lines[1]}: load and the writers cannot tell them apart; give all but one a new sid`],
        [file, lines[1], 'error', 'duplicate-sid', `spec:project:coding-conventions-003 carries sid "S-20260101-dupe", as does ${file}:${lines[0]}: load and the writers cannot tell them apart; give all but one a new sid`],
      ]);
    } finally {
      k.close();
    }
  });
});

describe('load by a sid two entries carry', () => {
  it('is refused naming the sid and both places, and each entry still loads by its id', async () => {
    const { dir, file, lines } = duplicatedSid();
    const before = readFileSync(file, 'utf8');
    const k = openKnowledge({ env: process.env, workflowRoot: dir });
    try {
      const places = `${file}:${lines[0]} (spec:project:coding-conventions-002), ${file}:${lines[1]} (spec:project:coding-conventions-003)`;
      for (const ref of ['S-20260101-dupe', 'spec:S-20260101-dupe']) {
        await expect(k.load(ref)).rejects.toMatchObject({
          code: 'KNOWLEDGE_CONFLICT',
          message: `sid "S-20260101-dupe" is carried by 2 spec entries: ${places}. Load one by its id, or give all but one a new sid by hand (\`maestro spec health\` reports it as duplicate-sid).`,
        });
      }
      expect(await k.load('spec:project:coding-conventions-003')).toMatchObject({ title: 'Two', sid: 'S-20260101-dupe' });
    } finally {
      k.close();
    }
    expect(readFileSync(file, 'utf8')).toBe(before);
  });
});

describe('spec health on an index built before frontmatter findings were stored', () => {
  it('rebuilds it, so a file unchanged since is reported too', () => {
    const { dir, root } = tempRoot();
    writeKnowhowFile(root, 'TIP-20260801-pool', { title: 'Pool', status: '[deprecated]' }, 'Keep the pool at ten.');
    const first = openKnowledge({ env: process.env, workflowRoot: dir });
    first.sync();
    first.close();
    // What version 6 stored for the file: no finding (its parser said nothing), and its version number.
    const db = new Database(join(root.workflowDir, INDEX_FILE));
    db.exec("UPDATE files SET findings = '[]'; UPDATE meta SET value = '6' WHERE key = 'schema'");
    db.close();
    const k = openKnowledge({ env: process.env, workflowRoot: dir });
    try {
      expect(k.health('knowhow').findings.map((f) => [f.line, f.code, f.message])).toEqual([
        [5, 'bad-frontmatter', 'status: expected text, got a list; the document reads as active, so search and briefs still offer it'],
      ]);
    } finally {
      k.close();
    }
  });
});
