/**
 * Line endings as a user sees them: a spec or knowhow file saved by a Windows editor (or checked
 * out with core.autocrlf) is CRLF, and what Maestro adds to it or changes in it must be CRLF too,
 * the old bytes untouched (text.ts `lineEnding`). Each test writes a real file in a temporary
 * `.workflow/`, goes through the writers the CLI, the API and promotion call, and reads bytes back.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { budget } from '../../../test/helpers/budget.js';
import { tempRoot } from '../../../test/helpers/knowledge.js';
import { maestroArgs } from '../../../test/helpers/maestro.js';
import { deprecateKnowhow, supersedeKnowhow } from './knowhowWriter.js';
import { parseKnowhowText } from './knowhowParser.js';
import type { WorkflowRoot } from './root.js';
import { renderSeed } from './seeds.js';
import { parseSpecText } from './specParser.js';
import { appendSpecEntry, deprecateSpec, markSpecConflict, supersedeSpec } from './specWriter.js';
import { lineEnding, withLineEnding } from './text.js';

const NOW = new Date('2026-08-20T02:19:16.123Z');
const crlf = (text: string) => text.replace(/\n/g, '\r\n');

/** 1-based lines that end in a bare LF: none in a file that is all CRLF. */
function bareLfLines(text: string): number[] {
  const out: number[] = [];
  text.split('\n').forEach((line, i, all) => {
    if (i < all.length - 1 && !line.endsWith('\r')) out.push(i + 1);
  });
  return out;
}

/** A coding-conventions.md as a user has it: the seed, one hand-written entry (a wrapped opening tag) and a legacy entry. */
const SPEC_LF = `${renderSeed('coding-conventions.md', 'coding')}
<spec-entry category="coding" keywords="naming" date="2026-01-01" sid="S-20260101-keep" title="Name by role">

### Name by role

Name modules by the role they play.
Not by the pattern they use.

</spec-entry>

<spec-entry
  category="coding"
  keywords="wrap"
  date="2026-01-02"
  sid="S-20260102-wrap"
  title="Wrapped tag"
>

### Wrapped tag

An opening tag whose \`>\` has a line of its own.

</spec-entry>

### [2026-01-03] Legacy heading

Legacy body, line one.
Line two.
`;

function specFile(root: WorkflowRoot, text: string): string {
  const dir = join(root.workflowDir, 'specs');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'coding-conventions.md');
  writeFileSync(file, text);
  return file;
}

/** The same writes the CLI and promotion make: an append (content mixing LF and CRLF), a supersede, a deprecate. */
function edit(root: WorkflowRoot): void {
  appendSpecEntry(root, { category: 'coding', title: 'Early returns', content: 'Return early.\nKeep nesting shallow.\r\nGuards first.', keywords: ['style'], sid: 'S-20260820-new1', description: 'why', now: NOW });
  supersedeSpec(root, 'S-20260101-keep', 'S-20260820-new1', { now: NOW });
  deprecateSpec(root, 'S-20260102-wrap');
}

describe('spec writers keep a CRLF file CRLF', () => {
  it('append, supersede and deprecate write a CRLF file exactly as they write its LF twin, in CRLF', () => {
    const lf = tempRoot();
    const win = tempRoot();
    const lfFile = specFile(lf.root, SPEC_LF);
    const winFile = specFile(win.root, crlf(SPEC_LF));
    edit(lf.root);
    edit(win.root);
    const lfText = readFileSync(lfFile, 'utf8');
    const winText = readFileSync(winFile, 'utf8');
    expect(lfText).not.toContain('\r');
    expect(bareLfLines(winText)).toEqual([]);
    expect(winText).toBe(crlf(lfText));
    // The two files read back as the same entries.
    expect(parseSpecText(winText, winFile).entries).toEqual(parseSpecText(lfText, lfFile).entries);
  });

  it('an appended entry leaves the old bytes as they were and reads back whole', () => {
    const { root } = tempRoot();
    const before = crlf(SPEC_LF);
    const file = specFile(root, before);
    const r = appendSpecEntry(root, { category: 'coding', title: 'Early returns', content: 'Return early.\nKeep nesting shallow.', keywords: ['style'], sid: 'S-20260820-new1', now: NOW });
    const after = readFileSync(file);
    expect(after.subarray(0, Buffer.byteLength(before)).equals(Buffer.from(before))).toBe(true);
    expect(bareLfLines(after.toString('utf8'))).toEqual([]);
    expect(after.toString('utf8').endsWith('</spec-entry>\r\n')).toBe(true);
    const parsed = parseSpecText(after.toString('utf8'), file);
    expect(parsed.findings.filter((f) => f.severity === 'error')).toEqual([]);
    expect(r).toMatchObject({ outcome: 'created', id: 'spec:project:coding-conventions-003' });
    expect(parsed.entries[2]).toMatchObject({ sid: 'S-20260820-new1', title: 'Early returns', content: '### Early returns\n\nReturn early.\nKeep nesting shallow.' });
  });

  it('an edit changes only the opening tag: a tag whose ">" has its own line keeps it', () => {
    const { root } = tempRoot();
    const before = crlf(SPEC_LF);
    const file = specFile(root, before);
    deprecateSpec(root, 'S-20260102-wrap');
    const { marker } = markSpecConflict(root, 'S-20260101-keep', 'disputed', { now: NOW });
    const expected = before
      .replace('title="Wrapped tag"\r\n>', 'title="Wrapped tag" status="deprecated"\r\n>')
      .replace('title="Name by role">', `title="Name by role" confidence="contested" conflict-marker="${marker}" conflict-note="disputed" conflict-date="2026-08-20">`);
    expect(readFileSync(file, 'utf8')).toBe(expected);
  });

  it('an LF file stays LF and a new file is LF', () => {
    const { root } = tempRoot();
    const file = specFile(root, SPEC_LF);
    appendSpecEntry(root, { category: 'coding', title: 'Early returns', content: 'Return early.\nKeep nesting shallow.', keywords: ['style'], now: NOW });
    deprecateSpec(root, 'S-20260102-wrap');
    expect(readFileSync(file, 'utf8')).not.toContain('\r');
    const created = appendSpecEntry(root, { category: 'test', title: 'Real databases', content: 'One SQLite file per test.', keywords: ['db'], now: NOW });
    expect(readFileSync(created.file, 'utf8')).not.toContain('\r');
  });

  it('a file with mixed endings gets its first line\'s ending, old lines untouched', () => {
    // CRLF at the top, LF entries appended below it (by maestro-flow, or by Maestro before this fix).
    const { root } = tempRoot();
    const damaged = `${crlf(renderSeed('coding-conventions.md', 'coding'))}\n<spec-entry category="coding" keywords="a" date="2026-01-01" sid="S-20260101-lf01" title="LF entry">\n\n### LF entry\n\nBody.\n\n</spec-entry>\n`;
    const file = specFile(root, damaged);
    appendSpecEntry(root, { category: 'coding', title: 'Next', content: 'Line one.\nLine two.', keywords: ['a'], now: NOW });
    const after = readFileSync(file, 'utf8');
    // The writer trims trailing white space before the entry (as maestro-flow's promotion does): the last line's LF goes with it.
    const kept = damaged.trimEnd();
    expect(after.startsWith(kept)).toBe(true);
    expect(bareLfLines(after.slice(kept.length))).toEqual([]);
    // And the other way round: an LF file with a CRLF line in it gets LF.
    const lfTop = `${renderSeed('coding-conventions.md', 'coding')}Pasted from Windows.\r\n`;
    specFile(root, lfTop);
    appendSpecEntry(root, { category: 'coding', title: 'Third', content: 'Line one.\nLine two.', keywords: ['a'], now: NOW });
    const lfAfter = readFileSync(file, 'utf8');
    expect(lfAfter.startsWith(lfTop.trimEnd())).toBe(true);
    expect(lfAfter.slice(lfTop.trimEnd().length)).not.toContain('\r');
  });
});

describe('maestro spec add | deprecate | conflict on a CRLF spec file', { timeout: budget(120_000) }, () => {
  const run = promisify(execFile);
  const maestro = (args: string[]) => run(process.execPath, [...maestroArgs(), ...args], { env: { ...process.env, MAESTRO_SEARCH_DAEMON: 'off' } });

  it('every line of the file ends in CRLF afterwards, the old bytes unchanged, and the entry loads', async () => {
    const { dir, root } = tempRoot();
    const before = crlf(SPEC_LF);
    const file = specFile(root, before);
    const add = await maestro(['spec', 'add', 'coding', 'Early returns', 'Return early to keep nesting shallow.', '--keywords', 'style', '--workflow-root', dir, '--json']);
    const { id } = JSON.parse(add.stdout) as { id: string };
    expect(id).toBe('spec:project:coding-conventions-003');
    await maestro(['spec', 'deprecate', 'S-20260102-wrap', '--workflow-root', dir]);
    await maestro(['spec', 'conflict', id, '--note', 'disputed', '--workflow-root', dir]);
    const after = readFileSync(file, 'utf8');
    expect(bareLfLines(after)).toEqual([]);
    // The old text is all there, byte for byte, but for the one attribute the deprecate added.
    expect(after.startsWith(before.replace('title="Wrapped tag"\r\n>', 'title="Wrapped tag" status="deprecated"\r\n>'))).toBe(true);
    const load = await maestro(['load', '--id', id, '--json', '--workflow-root', dir]);
    expect(JSON.parse(load.stdout).entries[0]).toMatchObject({ title: 'Early returns', body: '### Early returns\n\nReturn early to keep nesting shallow.' });
  });
});

describe('readers parse a CRLF file as its LF twin', () => {
  it('spec entries: content, attribute values spanning lines, legacy bodies, lines', () => {
    const lf = `${SPEC_LF}\n<spec-entry category="coding" keywords="x" date="2026-01-04" title="Two-line description" description="first
second">

### Two-line description

Body.

</spec-entry>
`;
    const a = parseSpecText(lf, 'coding-conventions.md');
    const b = parseSpecText(crlf(lf), 'coding-conventions.md');
    expect(b.entries).toEqual(a.entries);
    expect(b.findings).toEqual(a.findings);
    expect(b.entries.find((e) => e.form === 'legacy')!.content).toBe('### Legacy heading\n\nLegacy body, line one.\nLine two.');
  });

  it('knowhow documents: body and fields', () => {
    const lf = '---\ntitle: "Retry policy"\ntype: decision\nkeywords:\n  - retry\n---\n\n# Retry policy\n\nRetry at the edge.\nNever in the core.\n';
    const { frontmatter: fa, ...a } = parseKnowhowText(lf, 'DCS-20260101-retry.md');
    const { frontmatter: fb, ...b } = parseKnowhowText(crlf(lf), 'DCS-20260101-retry.md');
    expect(b).toEqual(a);
    expect(fb.data).toEqual(fa.data);
    expect(b.body).toBe('# Retry policy\n\nRetry at the edge.\nNever in the core.\n');
  });
});

describe('knowhow lifecycle writes on CRLF files', () => {
  function knowhow(root: WorkflowRoot, stem: string, text: string): string {
    const dir = join(root.workflowDir, 'knowhow');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${stem}.md`), text);
    return join(dir, `${stem}.md`);
  }
  const doc = (title: string) => crlf(`---\ntitle: "${title}"\ntype: tip\ncreated: 2026-08-01T00:00:00.000Z\n---\n\n# ${title}\n\nBody of ${title}.\n`);

  it('supersede and deprecate keep a CRLF document CRLF, its body bytes unchanged', () => {
    const { root } = tempRoot();
    const oldFile = knowhow(root, 'TIP-20260801-old', doc('Old tip'));
    const newFile = knowhow(root, 'TIP-20260801-new', doc('New tip'));
    const thirdFile = knowhow(root, 'TIP-20260801-third', doc('Third tip'));
    supersedeKnowhow(root, 'knowhow-tip-20260801-old', 'knowhow-tip-20260801-new');
    deprecateKnowhow(root, 'knowhow-tip-20260801-third');
    for (const [file, title] of [[oldFile, 'Old tip'], [newFile, 'New tip'], [thirdFile, 'Third tip']] as const) {
      const text = readFileSync(file, 'utf8');
      expect(bareLfLines(text)).toEqual([]);
      expect(text.endsWith(`\r\n---\r\n\r\n# ${title}\r\n\r\nBody of ${title}.\r\n`)).toBe(true);
    }
  });

  it('deprecate on a CRLF document without frontmatter adds a CRLF block', () => {
    const { root } = tempRoot();
    const file = knowhow(root, 'TIP-20260801-bare', crlf('# Bare tip\n\nNo frontmatter here.\n'));
    deprecateKnowhow(root, 'knowhow-tip-20260801-bare');
    expect(bareLfLines(readFileSync(file, 'utf8'))).toEqual([]);
  });
});

describe('lineEnding and withLineEnding', () => {
  it('read the first line\'s ending; LF when there is no line break', () => {
    expect(lineEnding('a\r\nb\nc\n')).toBe('\r\n');
    expect(lineEnding('a\nb\r\nc\r\n')).toBe('\n');
    expect(lineEnding('\r\n')).toBe('\r\n');
    expect(lineEnding('one line')).toBe('\n');
    expect(lineEnding('')).toBe('\n');
    expect(withLineEnding('a\nb\r\nc\rd', '\r\n')).toBe('a\r\nb\r\nc\rd');
    expect(withLineEnding('a\nb\r\nc', '\n')).toBe('a\nb\nc');
  });
});
