import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { tempRoot } from '../../../test/helpers/knowledge.js';
import { openKnowledge } from '../knowledge.js';
import { appendSpecEntry } from './specWriter.js';

describe('spec health', () => {
  it('reports a sid carried by two entries as an error on each, naming the other place', () => {
    const { root, dir } = tempRoot();
    const first = appendSpecEntry(root, { category: 'coding', title: 'First', content: 'First rule.', keywords: ['a'] });
    const dup = (title: string) => `<spec-entry category="coding" keywords="x" date="2026-01-01" sid="S-20260101-dupe" title="${title}">\n\n### ${title}\n\nBody.\n\n</spec-entry>\n`;
    writeFileSync(first.file, `${readFileSync(first.file, 'utf8')}\n${dup('One')}\n${dup('Two')}`);
    const lines = readFileSync(first.file, 'utf8').split('\n').flatMap((l, i) => (l.includes('S-20260101-dupe') ? [i + 1] : []));
    const k = openKnowledge({ env: process.env, workflowRoot: dir });
    try {
      const h = k.health('spec');
      expect(h).toMatchObject({ ok: false, entries: 3, errors: 2 });
      expect(h.findings.map((f) => [f.file, f.line, f.severity, f.code, f.message])).toEqual([
        [first.file, lines[0], 'error', 'duplicate-sid', `spec:project:coding-conventions-002 carries sid "S-20260101-dupe", as does ${first.file}:${lines[1]}: load and the writers cannot tell them apart; give all but one a new sid`],
        [first.file, lines[1], 'error', 'duplicate-sid', `spec:project:coding-conventions-003 carries sid "S-20260101-dupe", as does ${first.file}:${lines[0]}: load and the writers cannot tell them apart; give all but one a new sid`],
      ]);
    } finally {
      k.close();
    }
  });
});
