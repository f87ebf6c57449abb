import { describe, expect, it } from 'vitest';
import { parseSpecText } from './specParser.js';
import { formatSpecEntry, upsertTagAttributes } from './specWriter.js';
import { specEntryId } from './corpus.js';

const FRONT = `---
title: "Coding Conventions"
readMode: required
priority: high
category: coding
keywords:
  - style
  - naming
---

# Coding Conventions

## Entries
`;

describe('parseSpecText: <spec-entry> blocks', () => {
  it('reads every attribute the writer and the other tool emit, raw (never unescaped)', () => {
    const text = `${FRONT}
<spec-entry category="coding" keywords="ESM, Imports ,,naming" date="2026-07-01" sid="S-20260701-ab12" title="A &amp; B &quot;quoted&quot; &lt;x&gt;" description="why &amp; how" source="main@abc1234" ref="knowhow/DOC-20260701-x.md" confidence="high" conflict-marker="CMK-20260701-zz00" conflict-note="see thread" supersedes="S-1,S-2" superseded-by="S-9" status="deprecated" domain="web">

### A & B

Body line one.
Body line two.

</spec-entry>
`;
    const { entries, category, findings } = parseSpecText(text, 'coding-conventions.md');
    expect(category).toBe('coding');
    expect(findings).toEqual([]);
    expect(entries).toHaveLength(1);
    const e = entries[0]!;
    expect(e).toMatchObject({
      form: 'tag',
      ordinal: 1,
      category: 'coding',
      keywords: ['esm', 'imports', 'naming'],
      date: '2026-07-01',
      sid: 'S-20260701-ab12',
      title: 'A &amp; B &quot;quoted&quot; &lt;x&gt;',
      description: 'why &amp; how',
      source: 'main@abc1234',
      ref: 'knowhow/DOC-20260701-x.md',
      confidence: 'high',
      status: 'deprecated',
      supersedes: ['S-1', 'S-2'],
      supersededBy: 'S-9',
      errors: [],
    });
    expect(e.attrs['conflict-marker']).toBe('CMK-20260701-zz00');
    expect(e.attrs.domain).toBe('web');
    expect(e.lineStart).toBe(15);
    expect(e.content).toBe('### A & B\n\nBody line one.\nBody line two.');
  });

  it('drops unknown confidence/status values, reads superseded as deprecated, takes the title from ### when the attribute is absent', () => {
    const text = `<spec-entry category="test" keywords="x" date="2026-01-02" confidence="sure" status="weird">

### From the body

text
</spec-entry>
<spec-entry category="test" keywords="y" date="2026-01-03" status="superseded">
### Second
t
</spec-entry>`;
    const [a, b] = parseSpecText(text, 'test-conventions.md').entries;
    expect(a).toMatchObject({ title: 'From the body', confidence: undefined, status: 'active' });
    expect(b).toMatchObject({ title: 'Second', status: 'deprecated' });
  });

  it('accepts an opening tag spread over several lines', () => {
    const text = `<spec-entry
  category="arch"
  keywords="layer"
  date="2026-02-03"
  title="Multi line">
content
</spec-entry>`;
    const [e] = parseSpecText(text, 'architecture-constraints.md').entries;
    expect(e).toMatchObject({ title: 'Multi line', category: 'arch', lineStart: 1, content: 'content' });
  });

  it('reports missing required attributes and a category that differs from the file, and still returns the entry', () => {
    const text = `<spec-entry category="nope" keywords="" date="July 1">
### Bad
x
</spec-entry>
<spec-entry category="debug" keywords="a" date="2026-01-01" title="Other category">
y
</spec-entry>`;
    const r = parseSpecText(text, 'coding-conventions.md');
    expect(r.entries).toHaveLength(2);
    expect(r.entries[0]!.errors).toHaveLength(3);
    const codes = r.findings.map((f) => `${f.code}@${f.line}`);
    expect(codes).toEqual(['invalid-entry@1', 'invalid-entry@1', 'invalid-entry@1', 'category-mismatch@5']);
  });
});

describe('parseSpecText: legacy entries and ordinals', () => {
  it('counts tag blocks first (deprecated included), then legacy headings, for NNN ids', () => {
    const text = `${FRONT}
### [2025-03-01] Legacy first

legacy body one

<spec-entry category="coding" keywords="a" date="2026-01-01" title="Tag one" status="deprecated">
one
</spec-entry>

### [coding] [2025-03-02 10:30] Legacy second
legacy body two

### [2025-03-03] Empty legacy

<spec-entry category="coding" keywords="b" date="2026-01-02" title="Tag two">
### [2020-01-01] not a legacy entry: inside a block
two
</spec-entry>
`;
    const r = parseSpecText(text, 'coding-conventions.md');
    const order = r.entries.map((e) => [e.ordinal, e.form, e.title]);
    expect(order).toEqual([
      [1, 'tag', 'Tag one'],
      [2, 'tag', 'Tag two'],
      [3, 'legacy', 'Legacy first'],
      [4, 'legacy', 'Legacy second'],
    ]);
    const legacy = r.entries[3]!;
    expect(legacy).toMatchObject({ date: '2025-03-02', category: 'coding', lineStart: 23, content: '### Legacy second\n\nlegacy body two' });
    const dir = { idPrefix: 'spec:project:' };
    expect(r.entries.map((e) => specEntryId(dir, '/x/.workflow/specs/coding-conventions.md', e.ordinal))).toEqual([
      'spec:project:coding-conventions-001',
      'spec:project:coding-conventions-002',
      'spec:project:coding-conventions-003',
      'spec:project:coding-conventions-004',
    ]);
  });

  it('pads NNN to 3 digits and grows to 4 past 999', () => {
    expect(specEntryId({ idPrefix: 'spec:team:' }, 'My Notes.md', 7)).toBe('spec:team:my-notes-007');
    expect(specEntryId({ idPrefix: 'spec:project:' }, 'learnings.md', 1000)).toBe('spec:project:learnings-1000');
  });
});

describe('parseSpecText: bad input', () => {
  it('reports an unclosed tag with its line and still parses the entries after it', () => {
    const text = `<spec-entry category="coding" keywords="a" date="2026-01-01" title="Never closed">
text

<spec-entry category="coding" keywords="b" date="2026-01-02" title="Fine">
ok
</spec-entry>
</spec-entry>`;
    const r = parseSpecText(text, 'f.md');
    expect(r.findings.some((f) => f.code === 'unbalanced-tag')).toBe(true);
    expect(r.findings.filter((f) => f.code === 'unbalanced-tag').map((f) => f.line)).toContain(1);
  });

  it('reports attribute text that is not name="value" (single quotes, bare words)', () => {
    const r = parseSpecText(`<spec-entry category='coding' keywords="a" date="2026-01-01" title="T" bogus>\nx\n</spec-entry>`, 'f.md');
    const bad = r.findings.find((f) => f.code === 'bad-attribute');
    expect(bad?.line).toBe(1);
    expect(bad?.message).toContain("category='coding'");
  });

  it('ends the opening tag at the first ">", quotes or not, as maestro-flow does, and says so for a raw ">" in a value', () => {
    // maestro-flow src/tools/spec-entry-parser.ts: /<spec-entry\s+([^>]+)>/ and /([\w-]+)="([^"]*)"/.
    const text = `<spec-entry category="coding" keywords="cmp" date="2026-01-01" title="Prefer a > b comparisons" status="deprecated">\n\n### Prefer a > b comparisons\n\nBody.\n\n</spec-entry>`;
    const r = parseSpecText(text, 'f.md');
    // Both tools: no title attribute (the title comes from ###), and the status after the cut is not read.
    expect(r.entries[0]).toMatchObject({ title: 'Prefer a > b comparisons', status: 'active', category: 'coding' });
    expect(r.entries[0]!.attrs.title).toBeUndefined();
    expect(r.findings).toEqual([
      { file: 'f.md', line: 1, severity: 'error', code: 'bad-attribute', message: 'attribute title holds a raw ">": maestro-flow and Maestro end the opening tag at the first ">", so the rest of its value and every attribute after it are not read; write it as &gt;' },
    ]);
  });

  it('reads the last of a repeated attribute, as both maestro-flow parsers do, with a warning', () => {
    const r = parseSpecText(`<spec-entry category="coding" keywords="a" date="2026-01-01" title="T" status="active" status="deprecated">\nx\n</spec-entry>`, 'f.md');
    expect(r.entries[0]!.status).toBe('deprecated');
    expect(r.findings.map((f) => [f.code, f.severity, f.line])).toEqual([['repeated-attribute', 'warning', 1]]);
  });

  it('refuses binary content and oversize files with a finding, never throwing', () => {
    expect(parseSpecText('abc\n\u0000\u0001', 'bin.md').findings[0]).toMatchObject({ code: 'binary-content', line: 2 });
    const huge = 'x'.repeat(10 * 1024 * 1024);
    const r = parseSpecText(huge, 'huge.md');
    expect(r.entries).toEqual([]);
    expect(r.findings[0]!.code).toBe('file-too-large');
  });
});

describe('writer round trip', () => {
  it('escapes & " < > in sid/title/description/source/ref and the parser returns the escaped text', () => {
    const text = formatSpecEntry({ category: 'coding', keywords: ['a', 'b'], date: '2026-01-01', sid: 'S-1', title: 'Use <T> & "U"', description: 'd>e', source: 'x&y', ref: 'r"' }, 'body </spec-entry> end');
    expect(text).toBe(
      '<spec-entry category="coding" keywords="a,b" date="2026-01-01" sid="S-1" title="Use &lt;T&gt; &amp; &quot;U&quot;" description="d&gt;e" source="x&amp;y" ref="r&quot;">\n\n### Use <T> & "U"\n\nbody &lt;/spec-entry> end\n\n</spec-entry>',
    );
    const [e] = parseSpecText(text, 'coding-conventions.md').entries;
    expect(e).toMatchObject({ title: 'Use &lt;T&gt; &amp; &quot;U&quot;', description: 'd&gt;e', source: 'x&amp;y', ref: 'r&quot;', errors: [] });
  });

  it('upserts attributes on a multi-line opening tag without touching the body', () => {
    const text = `<spec-entry category="arch"\n  keywords="a" date="2026-01-01"\n  title="T" status="active">\nbody status="x"\n</spec-entry>`;
    const out = upsertTagAttributes(text, 1, { status: 'deprecated', 'superseded-by': 'S-2' });
    expect(out).toBe(`<spec-entry category="arch"\n  keywords="a" date="2026-01-01"\n  title="T" status="deprecated" superseded-by="S-2">\nbody status="x"\n</spec-entry>`);
  });
});
