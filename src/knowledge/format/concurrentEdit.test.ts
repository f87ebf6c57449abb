/**
 * A spec or knowhow file saved by another program (a person's editor, a `git pull`) while Maestro rewrites it:
 * the corpus lock keeps Maestro's writers apart, not theirs, and the save was overwritten without a word. The
 * save lands in the writers' test seam, after the new text is written beside the file and before the rename.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempRoot } from '../../../test/helpers/knowledge.js';
import { addKnowhow, supersedeKnowhow } from './knowhowWriter.js';
import { appendSpecEntry, supersedeSpec } from './specWriter.js';

const NOW = new Date('2026-08-20T02:19:16.123Z');
const SAVED = '\n<!-- a line a person saved -->\n';

/** A beforeRename hook that, on its `nth` call, saves `file` as another program would (the text it had, plus a line). */
function saveDuring(file: string, nth = 1): { beforeRename: () => void; saved: () => string } {
  let calls = 0;
  let text = '';
  return {
    beforeRename: () => {
      if (++calls !== nth) return;
      text = existsSync(file) ? readFileSync(file, 'utf8') + SAVED : SAVED;
      writeFileSync(file, text);
    },
    saved: () => text,
  };
}

const leftovers = (file: string) => readdirSync(dirname(file)).filter((n) => n.endsWith('.tmp'));

describe("a knowledge file another program saves while Maestro writes it", () => {
  it('a spec entry added meanwhile is refused, and the file keeps what they saved', () => {
    const { root } = tempRoot();
    const first = appendSpecEntry(root, { category: 'coding', title: 'Tabs', content: 'Indent with tabs.', keywords: ['tabs'], now: NOW });
    const edit = saveDuring(first.file);
    expect(() => appendSpecEntry(root, { category: 'coding', title: 'No var', content: 'Use let.', keywords: ['var'], now: NOW, hooks: edit })).toThrow(
      expect.objectContaining({ code: 'KNOWLEDGE_CONFLICT', message: `${first.file} changed while Maestro was writing it (another program saved it after Maestro read it): nothing was written, and the file is as that program left it. Run the command again.` }),
    );
    expect(readFileSync(first.file, 'utf8')).toBe(edit.saved());
    expect(leftovers(first.file)).toEqual([]);
    // Run again, the entry goes in beside their line.
    appendSpecEntry(root, { category: 'coding', title: 'No var', content: 'Use let.', keywords: ['var'], now: NOW });
    expect(readFileSync(first.file, 'utf8')).toContain(SAVED.trim());
    expect(readFileSync(first.file, 'utf8')).toContain('### No var');
  });

  it('a spec file created meanwhile is not replaced by the new one', () => {
    const { root } = tempRoot();
    const file = join(root.workflowDir, 'specs', 'review-standards.md');
    const edit = saveDuring(file);
    expect(() => appendSpecEntry(root, { category: 'review', title: 'Two approvals', content: 'x', keywords: ['x'], now: NOW, hooks: edit })).toThrow(
      expect.objectContaining({ code: 'KNOWLEDGE_CONFLICT', message: expect.stringMatching(/^\S+review-standards\.md was created while Maestro was writing it/) }),
    );
    expect(readFileSync(file, 'utf8')).toBe(SAVED);
  });

  it('a spec entry superseded while its file is saved is refused, and the file keeps what they saved', () => {
    const { root } = tempRoot();
    const a = appendSpecEntry(root, { category: 'coding', title: 'Old rule', content: 'x', keywords: ['x'], now: NOW, sid: 'S-20260820-aaaa' });
    appendSpecEntry(root, { category: 'coding', title: 'New rule', content: 'y', keywords: ['y'], now: NOW, sid: 'S-20260820-bbbb' });
    const edit = saveDuring(a.file);
    expect(() => supersedeSpec(root, 'S-20260820-aaaa', 'S-20260820-bbbb', { now: NOW, hooks: edit })).toThrow(expect.objectContaining({ code: 'KNOWLEDGE_CONFLICT' }));
    expect(readFileSync(a.file, 'utf8')).toBe(edit.saved());
  });

  it('a knowhow document saved while it is being superseded keeps what was saved', () => {
    const { root } = tempRoot();
    const old = addKnowhow(root, { type: 'decision', title: 'Use MySQL', body: 'Chosen for hosting.', keywords: ['db'], now: NOW });
    const fresh = addKnowhow(root, { type: 'decision', title: 'Use SQLite', body: 'Embedded.', keywords: ['db'], now: NOW });
    const oldFile = join(root.workflowDir, old.path);
    // The successor is written first; the person saves the old document while its own write is under way.
    const edit = saveDuring(oldFile, 2);
    expect(() => supersedeKnowhow(root, old.id, fresh.id, { hooks: edit })).toThrow(expect.objectContaining({ code: 'KNOWLEDGE_CONFLICT' }));
    expect(readFileSync(oldFile, 'utf8')).toBe(edit.saved());
    // Run again, it completes on top of their save.
    supersedeKnowhow(root, old.id, fresh.id);
    expect(readFileSync(oldFile, 'utf8')).toContain(SAVED.trim());
    expect(readFileSync(oldFile, 'utf8')).toContain('status: "deprecated"');
  });
});
