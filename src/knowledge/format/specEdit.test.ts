import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { tempRoot } from '../../../test/helpers/knowledge.js';
import { builtinSources, loadCorpus } from './corpus.js';
import { parseSpecText } from './specParser.js';
import { appendSpecEntry, deprecateSpec, markSpecConflict, supersedeSpec, upsertTagAttributes } from './specWriter.js';

/** A hand-written entry as another tool may write it: a raw `>` inside the quoted title. */
const RAW_GT = `<spec-entry category="coding" keywords="cmp" date="2026-01-01" sid="S-20260101-gtgt" title="Prefer a > b comparisons">

### Prefer a > b comparisons

Compare the larger value first.

</spec-entry>
`;

function twoEntries() {
  const { root } = tempRoot();
  const first = appendSpecEntry(root, { category: 'coding', title: 'First', content: 'First rule.', keywords: ['a'], sid: 'S-20260101-aaaa' });
  return { root, first, file: first.file };
}

describe('writers refuse an entry they cannot rewrite safely (a raw ">" in a quoted attribute)', () => {
  it('spec deprecate refuses with file and line, and the file is byte for byte unchanged', () => {
    const { root, file } = twoEntries();
    writeFileSync(file, `${readFileSync(file, 'utf8')}\n${RAW_GT}`);
    const before = readFileSync(file, 'utf8');
    const line = before.split('\n').findIndex((l) => l.includes('S-20260101-gtgt')) + 1;
    expect(() => deprecateSpec(root, 'S-20260101-gtgt')).toThrow(
      expect.objectContaining({ code: 'CORRUPT_FILE', message: expect.stringContaining(`${file}:${line}: attribute title holds a raw ">"`) }),
    );
    expect(readFileSync(file, 'utf8')).toBe(before);
    // What `spec list` shows is still the whole title and the entry is still active, not "Prefer a status=".
    const e = loadCorpus(builtinSources(root)).entries.find((x) => x.sid === 'S-20260101-gtgt');
    expect(e).toMatchObject({ title: 'Prefer a > b comparisons', declaredStatus: 'active' });
  });

  it('an entry in a file skipped as binary is not said to be missing: the refusal names that file', () => {
    const { root, file } = twoEntries();
    const bytes = Buffer.concat([readFileSync(file), Buffer.from([0xff, 0x0a])]);
    writeFileSync(file, bytes);
    expect(() => deprecateSpec(root, 'S-20260101-aaaa')).toThrow(
      expect.objectContaining({ code: 'UNKNOWN_KNOWLEDGE_ID', message: expect.stringContaining(`; not searched, holding binary (NUL or invalid UTF-8) content: ${file}:`) }),
    );
    expect(readFileSync(file)).toEqual(bytes);
  });

  it('spec supersede and conflict refuse before writing either file, so no half-written pair is left', () => {
    const { root, file, first } = twoEntries();
    writeFileSync(file, `${readFileSync(file, 'utf8')}\n${RAW_GT}`);
    const before = readFileSync(file, 'utf8');
    expect(() => supersedeSpec(root, 'S-20260101-gtgt', first.id)).toThrow(/raw ">".*nothing was written/);
    expect(() => supersedeSpec(root, first.id, 'S-20260101-gtgt')).toThrow(/raw ">".*nothing was written/);
    expect(() => markSpecConflict(root, 'S-20260101-gtgt', 'disputed')).toThrow(/raw ">"/);
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('refuses to change an entry that swallowed the next one (an unclosed <spec-entry> before it)', () => {
    const { root, file } = twoEntries();
    writeFileSync(file, `${readFileSync(file, 'utf8')}\n<spec-entry category="coding" keywords="b" date="2026-01-01" title="Open">\nnever closed\n\n${RAW_GT.replace(' > ', ' &gt; ')}`);
    const before = readFileSync(file, 'utf8');
    const line = before.split('\n').findIndex((l) => l.includes('title="Open"')) + 1;
    expect(() => deprecateSpec(root, 'spec:project:coding-conventions-002')).toThrow(`${file}:${line}: <spec-entry> is not closed before the next <spec-entry>`);
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('upsertTagAttributes (the audit path) refuses the same entry and edits only real attributes', () => {
    expect(() => upsertTagAttributes(RAW_GT, 1, { status: 'deprecated' }, 'coding-conventions.md')).toThrow(/coding-conventions\.md:1: attribute title holds a raw ">"/);
    // ` status="` inside another attribute's value is not the status attribute.
    const tricky = '<spec-entry category="coding" keywords="k" date="2026-01-01" title="a status=" note="b">\nx\n</spec-entry>';
    const out = upsertTagAttributes(tricky, 1, { status: 'deprecated' });
    expect(out).toBe('<spec-entry category="coding" keywords="k" date="2026-01-01" title="a status=" note="b" status="deprecated">\nx\n</spec-entry>');
    expect(parseSpecText(out, 'f.md').entries[0]).toMatchObject({ title: 'a status=', status: 'deprecated' });
  });
});

describe('a sid carried by two entries', () => {
  const dup = (title: string) => `<spec-entry category="coding" keywords="x" date="2026-01-01" sid="S-20260101-dupe" title="${title}">\n\n### ${title}\n\nBody.\n\n</spec-entry>\n`;

  it('a write addressed by that sid refuses, naming both places, and changes nothing', () => {
    const { root, file } = twoEntries();
    writeFileSync(file, `${readFileSync(file, 'utf8')}\n${dup('One')}\n${dup('Two')}`);
    const before = readFileSync(file, 'utf8');
    const lines = before.split('\n').flatMap((l, i) => (l.includes('S-20260101-dupe') ? [i + 1] : []));
    expect(lines).toHaveLength(2);
    for (const write of [() => deprecateSpec(root, 'S-20260101-dupe'), () => supersedeSpec(root, 'S-20260101-aaaa', 'S-20260101-dupe'), () => markSpecConflict(root, 'spec:S-20260101-dupe', 'n')]) {
      expect(write).toThrow(expect.objectContaining({ code: 'KNOWLEDGE_CONFLICT', message: expect.stringContaining(`sid "S-20260101-dupe" is carried by 2 spec entries: ${file}:${lines[0]} (spec:project:coding-conventions-002), ${file}:${lines[1]} (spec:project:coding-conventions-003)`) }));
    }
    expect(readFileSync(file, 'utf8')).toBe(before);
    // A new entry may not take a sid that is already carried either.
    expect(() => appendSpecEntry(root, { category: 'coding', title: 'Fourth', content: 'c', keywords: ['k'], sid: 'S-20260101-aaaa' })).toThrow(`sid "S-20260101-aaaa" is already carried by the spec entry at ${file}:`);
    expect(readFileSync(file, 'utf8')).toBe(before);
  });
});
