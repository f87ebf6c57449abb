import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { tempRoot } from '../../../test/helpers/knowledge.js';
import { builtinSources, effectiveDeprecated, loadCorpus } from './corpus.js';
import { addKnowhow, deprecateKnowhow, supersedeKnowhow } from './knowhowWriter.js';
import { openKnowledge } from '../knowledge.js';
import { parseFrontmatter } from './frontmatter.js';
import { parseSpecText } from './specParser.js';
import { appendSpecEntry, deprecateSpec, markSpecConflict, supersedeSpec } from './specWriter.js';

const NOW = new Date('2026-08-20T02:19:16.123Z');

describe('appendSpecEntry', () => {
  it('creates the category file from its seed and appends entries with stable canonical ids', () => {
    const { root } = tempRoot();
    const a = appendSpecEntry(root, { category: 'review', title: 'Two approvals', content: 'Needs two approvals.', keywords: ['Review', ' gate '], now: NOW, sid: 'S-20260820-aaaa' });
    const b = appendSpecEntry(root, { category: 'review', title: 'Green CI first', content: 'CI must pass.', keywords: ['ci'], now: NOW });
    expect(a).toMatchObject({ outcome: 'created', id: 'spec:project:review-standards-001', sid: 'S-20260820-aaaa' });
    expect(b.id).toBe('spec:project:review-standards-002');
    const text = readFileSync(join(root.workflowDir, 'specs', 'review-standards.md'), 'utf8');
    expect(text.startsWith('---\ntitle: "Review Standards"\nreadMode: required\npriority: medium\ncategory: review\nkeywords:\n  - review\n')).toBe(true);
    expect(text).toContain('<spec-entry category="review" keywords="review,gate" date="2026-08-20" sid="S-20260820-aaaa" title="Two approvals">\n\n### Two approvals\n\nNeeds two approvals.\n\n</spec-entry>');
    const parsed = parseSpecText(text, 'review-standards.md');
    expect(parsed.findings).toEqual([]);
    expect(parsed.entries.map((e) => e.title)).toEqual(['Two approvals', 'Green CI first']);
  });

  it('never gives a new entry a sid that a spec file of the folder already uses that day', () => {
    const { root } = tempRoot();
    // Math.random() 0.3767 draws "dk7b", 0.5 draws "i" (padded to "i000").
    appendSpecEntry(root, { category: 'coding', title: 'Existing', content: 'x', keywords: ['x'], now: NOW, sid: 'S-20260820-dk7b' });
    const draws = [0.3767, 0.5];
    const spy = vi.spyOn(Math, 'random').mockImplementation(() => draws.shift() ?? 0.7);
    try {
      const next = appendSpecEntry(root, { category: 'review', title: 'Next', content: 'z', keywords: ['z'], now: NOW });
      expect(next.sid).toBe('S-20260820-i000');
    } finally {
      spy.mockRestore();
    }
  });

  it('skips a duplicate title (case-insensitive) unless allowed, and changes nothing', () => {
    const { root } = tempRoot();
    appendSpecEntry(root, { category: 'coding', title: 'No default exports', content: 'x', keywords: ['exports'] });
    const file = join(root.workflowDir, 'specs', 'coding-conventions.md');
    const before = readFileSync(file, 'utf8');
    const dup = appendSpecEntry(root, { category: 'coding', title: '  no DEFAULT exports ', content: 'y', keywords: ['exports'] });
    expect(dup).toMatchObject({ outcome: 'skipped-duplicate', id: 'spec:project:coding-conventions-001' });
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(appendSpecEntry(root, { category: 'coding', title: 'No default exports', content: 'y', keywords: ['exports'], allowDuplicateTitle: true }).outcome).toBe('created');
  });

  it('moves content over 2048 characters to a knowhow DOC file and keeps a 200-character summary with a ref', async () => {
    const { root, dir } = tempRoot();
    const long = `${'word '.repeat(500)}end`;
    const r = appendSpecEntry(root, { category: 'arch', title: 'Big design note', content: long, keywords: ['design'], now: NOW });
    expect(r.overflowKnowhowId).toMatch(/^knowhow-doc-\d{8}-big-design-note$/);
    const [e] = parseSpecText(readFileSync(r.file, 'utf8'), r.file).entries;
    expect(e!.ref).toMatch(/^knowhow\/DOC-\d{8}-big-design-note\.md$/);
    expect(e!.content).toBe(`### Big design note\n\n${'word '.repeat(40).trim()}`);
    const k = openKnowledge({ env: process.env, workflowRoot: dir });
    try {
      expect(k.neighbors(r.id, 'references').map((n) => n.id)).toEqual([r.overflowKnowhowId]);
    } finally {
      k.close();
    }
  });

  it('refuses bad input with what and where, writing nothing', () => {
    const { root } = tempRoot();
    expect(() => appendSpecEntry(root, { category: 'style', title: 't', content: 'c', keywords: ['a'] })).toThrow(/category "style" must be one of/);
    expect(() => appendSpecEntry(root, { category: 'coding', title: 't', content: 'c', keywords: [] })).toThrow(/at least one keyword/);
    expect(() => appendSpecEntry(root, { category: 'coding', title: 't', content: 'c', keywords: ['a"b'] })).toThrow(/may not contain/);
    expect(loadCorpus(builtinSources(root)).entries).toEqual([]);
  });

  it('writes a title holding </spec-entry> so the file stays well-formed and the entry reads back whole', () => {
    const { root } = tempRoot();
    const title = 'Evil </spec-entry> title <spec-entry x="1">';
    const r = appendSpecEntry(root, { category: 'coding', title, content: 'The body survives.', keywords: ['k'] });
    appendSpecEntry(root, { category: 'coding', title: 'After', content: 'Next entry.', keywords: ['k'] });
    const text = readFileSync(r.file, 'utf8');
    expect(text).toContain('\n### Evil &lt;/spec-entry> title &lt;spec-entry x="1">\n');
    const parsed = parseSpecText(text, r.file);
    expect(parsed.findings).toEqual([]);
    const entries = loadCorpus(builtinSources(root)).entries;
    expect(entries.map((e) => [e.id, e.title])).toEqual([
      [r.id, title],
      ['spec:project:coding-conventions-002', 'After'],
    ]);
    expect(entries[0]!.body).toContain('The body survives.');
  });

  it('refuses to append after an unclosed <spec-entry>, naming file and line, and changes nothing', () => {
    const { root } = tempRoot();
    const first = appendSpecEntry(root, { category: 'coding', title: 'First', content: 'First rule.', keywords: ['a'] });
    writeFileSync(first.file, `${readFileSync(first.file, 'utf8')}\n<spec-entry category="coding" keywords="b" date="2026-01-01" title="Broken">\nnever closed\n`);
    const before = readFileSync(first.file, 'utf8');
    const line = before.split('\n').findIndex((l) => l.includes('title="Broken"')) + 1;
    expect(() => appendSpecEntry(root, { category: 'coding', title: 'Third', content: 'Third rule.', keywords: ['t'] })).toThrow(
      expect.objectContaining({ code: 'CORRUPT_FILE', message: expect.stringContaining(`Cannot append to ${first.file}: line ${line}: <spec-entry> has no matching </spec-entry>`) }),
    );
    expect(readFileSync(first.file, 'utf8')).toBe(before);
  });

  it('names the path when the target spec file is a directory', () => {
    const { root } = tempRoot();
    const target = join(root.workflowDir, 'specs', 'learnings.md');
    mkdirSync(target, { recursive: true });
    expect(() => appendSpecEntry(root, { category: 'learning', title: 'L', content: 'x', keywords: ['t'] })).toThrow(`Cannot read spec file ${target}: it is a directory, not a file. Nothing was written.`);
  });

  it.each(['extreme', 'low" status="deprecated', 'x>', '', 'HIGH'])('refuses confidence %j before writing anything', (confidence) => {
    const { root } = tempRoot();
    const r = appendSpecEntry(root, { category: 'coding', title: 'Kept', content: 'c', keywords: ['a'], confidence: 'high' });
    const before = readFileSync(r.file, 'utf8');
    const long = 'x'.repeat(3000); // over the size guard: not even the knowhow overflow file may appear
    const bad = { category: 'coding', title: 'New', content: long, keywords: ['a'], confidence: confidence as 'high' };
    expect(() => appendSpecEntry(root, bad)).toThrow(expect.objectContaining({ code: 'BAD_INPUT', message: expect.stringMatching(/^confidence ".*" is not a spec confidence: use one of high\|medium\|low\|contested\./) }));
    expect(readFileSync(r.file, 'utf8')).toBe(before);
    expect(loadCorpus(builtinSources(root)).entries.map((e) => [e.title, e.confidence])).toEqual([['Kept', 'high']]);
    expect(() => markSpecConflict(root, r.id, 'note', { confidence })).toThrow(/is not a spec confidence/);
    expect(readFileSync(r.file, 'utf8')).toBe(before);
  });
});

describe('spec supersede / deprecate / conflict', () => {
  it('deprecates the old entry, records the pair on both, and replays as a no-op', () => {
    const { root } = tempRoot();
    const a = appendSpecEntry(root, { category: 'coding', title: 'Old rule', content: 'old', keywords: ['rule'], sid: 'S-1' });
    const b = appendSpecEntry(root, { category: 'test', title: 'New rule', content: 'new', keywords: ['rule'], sid: 'S-2' });
    expect(supersedeSpec(root, a.id, 'S-2')).toMatchObject({ oldId: a.id, newId: b.id, replayed: false });
    const [oldE] = parseSpecText(readFileSync(a.file, 'utf8'), a.file).entries;
    const [newE] = parseSpecText(readFileSync(b.file, 'utf8'), b.file).entries;
    expect(oldE).toMatchObject({ status: 'deprecated', supersededBy: 'S-2' });
    expect(newE!.supersedes).toEqual(['S-1']);
    const before = readFileSync(a.file, 'utf8') + readFileSync(b.file, 'utf8');
    expect(supersedeSpec(root, 'S-1', 'S-2').replayed).toBe(true);
    expect(readFileSync(a.file, 'utf8') + readFileSync(b.file, 'utf8')).toBe(before);
    const c = appendSpecEntry(root, { category: 'coding', title: 'Third', content: 'c', keywords: ['rule'], sid: 'S-3' });
    expect(() => supersedeSpec(root, 'S-1', c.id)).toThrow(/already superseded by S-2/);
    expect(() => supersedeSpec(root, 'S-3', 'S-3')).toThrow(/itself/);
  });

  it('reads an interrupted supersede (successor written, old not yet) as superseded, and completes it on rerun', () => {
    const { root } = tempRoot();
    const a = appendSpecEntry(root, { category: 'coding', title: 'Old', content: 'o', keywords: ['k'], sid: 'S-A' });
    appendSpecEntry(root, { category: 'coding', title: 'New', content: 'n', keywords: ['k'], sid: 'S-B' });
    // Crash simulation: only the successor's write happened.
    const text = readFileSync(a.file, 'utf8').replace('sid="S-B" title="New">', 'sid="S-B" title="New" supersedes="S-A">');
    writeFileSync(a.file, text);
    const corpus = loadCorpus(builtinSources(root));
    expect([...effectiveDeprecated(corpus.entries)]).toEqual([a.id]);
    expect(supersedeSpec(root, 'S-A', 'S-B').replayed).toBe(false);
    const [oldE, newE] = parseSpecText(readFileSync(a.file, 'utf8'), a.file).entries;
    expect(oldE).toMatchObject({ status: 'deprecated', supersededBy: 'S-B' });
    expect(newE!.supersedes).toEqual(['S-A']);
  });

  it('gives a sid to an entry that has none before superseding it, and marks conflicts', () => {
    const { root } = tempRoot();
    const file = join(root.workflowDir, 'specs', 'debug-notes.md');
    appendSpecEntry(root, { category: 'debug', title: 'Seed', content: 's', keywords: ['x'] });
    writeFileSync(file, `${readFileSync(file, 'utf8')}\n<spec-entry category="debug" keywords="x" date="2026-01-01" title="No sid">\nbody\n</spec-entry>\n`);
    const r = supersedeSpec(root, 'spec:project:debug-notes-002', 'spec:project:debug-notes-001');
    expect(r.oldSid).toMatch(/^S-\d{8}-[a-z0-9]{4}$/);
    expect(deprecateSpec(root, 'spec:project:debug-notes-002').replayed).toBe(true);
    const m = markSpecConflict(root, 'spec:project:debug-notes-001', 'contradicts "run 7" <today>', { now: NOW });
    expect(m.marker).toMatch(/^CMK-20260820-/);
    const [e] = parseSpecText(readFileSync(file, 'utf8'), file).entries;
    expect(e).toMatchObject({ confidence: 'contested' });
    expect(e!.attrs['conflict-note']).toBe('contradicts  run 7   today');
    expect(e!.attrs['conflict-date']).toBe('2026-08-20');
  });
});

describe('knowhow writers', () => {
  it('names files by type prefix and local date, writes frontmatter in the tool order, and replays explicit ids', () => {
    const { root } = tempRoot();
    const r = addKnowhow(root, { type: 'decision', title: 'Use FTS5: per-column weights', body: 'Because...\r\n', keywords: ['search'], tags: ['index'], status: 'accepted', now: NOW });
    expect(r.filename).toMatch(/^DCS-2026082\d-use-fts5-per-column-weights\.md$/);
    const text = readFileSync(join(root.workflowDir, r.path), 'utf8');
    expect(text).toBe(`---\ntitle: "Use FTS5: per-column weights"\ntype: decision\ncreated: 2026-08-20T02:19:16.123Z\nkeywords:\n  - search\ntags:\n  - index\nstatus: accepted\n---\n\nBecause...\n`);
    const explicit = { type: 'tip', title: 'Tip', body: 'b', explicitId: 'TIP-20260820-my-tip', keywords: ['b', 'a'] };
    const first = addKnowhow(root, explicit);
    expect(first).toMatchObject({ id: 'knowhow-tip-20260820-my-tip', filename: 'TIP-20260820-my-tip.md', replayed: false });
    expect(addKnowhow(root, { ...explicit, keywords: ['a', 'b'] })).toMatchObject({ replayed: true, payloadHash: first.payloadHash });
    expect(() => addKnowhow(root, { ...explicit, body: 'changed' })).toThrow(/already exists with different content/);
    expect(() => addKnowhow(root, { type: 'tip', title: 't', body: 'b', explicitId: 'rcp-20260820-x' })).toThrow(/prefix rcp but type tip needs tip/);
  });

  it('refuses to supersede or deprecate a file whose frontmatter is never closed, changing neither file', () => {
    const { root } = tempRoot();
    const b = addKnowhow(root, { type: 'tip', title: 'New tip', body: 'b', now: NOW });
    const oldFile = join(root.workflowDir, 'knowhow', 'TIP-20260101-old.md');
    const newFile = join(root.workflowDir, b.path);
    writeFileSync(oldFile, '---\ntitle: "Unterminated\n\nbody\n');
    const before = [readFileSync(oldFile, 'utf8'), readFileSync(newFile, 'utf8')];
    const refusal = expect.objectContaining({ code: 'CORRUPT_FILE', message: `Cannot change knowhow ${oldFile}:1: frontmatter opened with --- on line 1 is never closed (no --- line after it). Add the closing --- line by hand; nothing was written.` });
    expect(() => supersedeKnowhow(root, 'knowhow-tip-20260101-old', b.id)).toThrow(refusal);
    expect(() => supersedeKnowhow(root, b.id, 'knowhow-tip-20260101-old')).toThrow(refusal);
    expect(() => deprecateKnowhow(root, 'knowhow-tip-20260101-old')).toThrow(refusal);
    expect([readFileSync(oldFile, 'utf8'), readFileSync(newFile, 'utf8')]).toEqual(before);
  });

  it('refuses to supersede or deprecate a file holding bytes that are not UTF-8, keeping both files byte for byte', () => {
    const { root } = tempRoot();
    const b = addKnowhow(root, { type: 'tip', title: 'New tip', body: 'b', now: NOW });
    const oldFile = join(root.workflowDir, 'knowhow', 'TIP-20260101-k.md');
    const newFile = join(root.workflowDir, b.path);
    writeFileSync(oldFile, Buffer.concat([Buffer.from('---\ntitle: K\ntype: tip\n---\n\nna'), Buffer.from([0xef, 0xfe]), Buffer.from('ve\n')]));
    const before = [readFileSync(oldFile), readFileSync(newFile)];
    const refusal = expect.objectContaining({
      code: 'CORRUPT_FILE',
      message: `Cannot change knowhow ${oldFile}:6: file holds binary (NUL or invalid UTF-8) content, which rewriting it would replace with U+FFFD. Repair or remove the file by hand; nothing was written.`,
    });
    expect(() => deprecateKnowhow(root, 'knowhow-tip-20260101-k')).toThrow(refusal);
    expect(() => supersedeKnowhow(root, 'knowhow-tip-20260101-k', b.id)).toThrow(refusal);
    expect(() => supersedeKnowhow(root, b.id, 'knowhow-tip-20260101-k')).toThrow(refusal);
    expect([readFileSync(oldFile), readFileSync(newFile)]).toEqual(before);
  });

  it('supersedes with JSON values, replays, refuses cycles, and deprecates', () => {
    const { root } = tempRoot();
    const a = addKnowhow(root, { type: 'recipe', title: 'Old recipe', body: 'a', now: NOW });
    const b = addKnowhow(root, { type: 'recipe', title: 'New recipe', body: 'b', now: NOW });
    expect(supersedeKnowhow(root, a.id, b.id).replayed).toBe(false);
    const oldText = readFileSync(join(root.workflowDir, a.path), 'utf8');
    expect(oldText).toContain('status: "deprecated"\nsupersededBy: "' + b.id + '"\n---');
    expect(readFileSync(join(root.workflowDir, b.path), 'utf8')).toContain(`supersedes: ["${a.id}"]`);
    expect(supersedeKnowhow(root, a.id, b.id).replayed).toBe(true);
    expect(() => supersedeKnowhow(root, b.id, a.id)).toThrow(/cycle/);
    const c = addKnowhow(root, { type: 'tip', title: 'Lone tip', body: 'c', now: NOW });
    expect(deprecateKnowhow(root, c.id).replayed).toBe(false);
    const statuses = Object.fromEntries(loadCorpus(builtinSources(root)).entries.map((e) => [e.id, e.declaredStatus]));
    expect(statuses).toEqual({ [a.id]: 'deprecated', [b.id]: 'active', [c.id]: 'deprecated' });
  });

  it('supersede keeps the comments and lines a person wrote, and a value already set keeps its own spelling', () => {
    const { root } = tempRoot();
    const dir = join(root.workflowDir, 'knowhow');
    mkdirSync(dir, { recursive: true });
    const oldFile = join(dir, 'TIP-20260101-old.md');
    const newFile = join(dir, 'TIP-20260102-new.md');
    const oldText = ['---', '# Kept for the 0.5 branch; see the new tip.', 'title: Old tip', 'type: tip', 'status: deprecated', '', 'keywords:', '  - retry', '---', '', 'old body', ''].join('\n');
    const newText = ['---', 'title: New tip', 'type: tip', 'supersedes:', '  - knowhow-tip-20251201-first', '  # the 2025 tips were merged by hand', '  - knowhow-tip-20251215-second', 'relatedPaths:', '  - src/net.ts', '---', '', 'new body', ''].join('\n');
    writeFileSync(oldFile, oldText);
    writeFileSync(newFile, newText);
    expect(supersedeKnowhow(root, 'knowhow-tip-20260101-old', 'knowhow-tip-20260102-new').replayed).toBe(false);
    expect(readFileSync(oldFile, 'utf8')).toBe(oldText.replace('  - retry\n---', '  - retry\nsupersededBy: "knowhow-tip-20260102-new"\n---'));
    // The comment inside the rewritten list stays, just above it; no old item is left behind under the new line.
    const all = '["knowhow-tip-20251201-first","knowhow-tip-20251215-second","knowhow-tip-20260101-old"]';
    const written = readFileSync(newFile, 'utf8');
    expect(written).toBe(newText.replace('supersedes:\n  - knowhow-tip-20251201-first\n  # the 2025 tips were merged by hand\n  - knowhow-tip-20251215-second\n', `  # the 2025 tips were merged by hand\nsupersedes: ${all}\n`));
    expect(parseFrontmatter(written).problems).toEqual([]);
  });
});
