import { describe, expect, it } from 'vitest';
import { parseReport } from '../lifecycle/session/report.js';
import { parseFrontmatter, splitFrontmatter } from './frontmatter.js';
import { frontmatterProblems, KNOWHOW_FIELDS, SPEC_FIELDS, WIKI_FIELDS } from './frontmatterFields.js';
import { editFrontmatter, renderFrontmatter, setFrontmatterLine } from './frontmatterEdit.js';
import { setFrontmatterKey } from './knowhowWriter.js';

const KNOWHOW = ['---', 'title: "Retry: with backoff"', 'type: tip', 'keywords:', '  - retry', '  - backoff', 'tags: [net, io]', 'relatedPaths:', '  - src/net.ts', 'lifecycleStatus: reviewed', '---', '', '# Retry', 'body line', ''].join('\n');

describe('the one frontmatter reader: finding the block', () => {
  it('reads a CRLF file as the LF one, line numbers and all, and keeps the body as written', () => {
    const lf = parseFrontmatter(KNOWHOW);
    const crlf = parseFrontmatter(KNOWHOW.replace(/\n/g, '\r\n'));
    expect(crlf.data).toEqual(lf.data);
    expect(crlf.data).toMatchObject({ title: 'Retry: with backoff', keywords: ['retry', 'backoff'], tags: ['net', 'io'] });
    expect(crlf.lineCount).toBe(11);
    expect(crlf.bodyLine).toBe(12);
    expect(crlf.body).toBe('\r\n# Retry\r\nbody line\r\n');
    // The wiki's body reader splits on \n: its dialect hands it LF.
    expect(parseFrontmatter(KNOWHOW.replace(/\n/g, '\r\n'), { dialect: 'wiki' }).body).toBe('\n# Retry\nbody line\n');
  });

  it('reads past a byte-order mark and leading blank lines, and counts those lines in problem lines', () => {
    const doc = parseFrontmatter(`\uFEFF\n\n---\ntitle: t\nno colon here\n---\nbody`);
    expect(doc.present).toBe(true);
    expect(doc.data).toEqual({ title: 't' });
    expect(doc.problems).toEqual([{ line: 5, message: 'unreadable frontmatter line "no colon here": expected "key: value"' }]);
    expect(doc.body).toBe('body');
    expect(doc.bodyLine).toBe(7);
  });

  it('a block never closed: no data, the whole text as body, and a problem naming the opening line', () => {
    const text = '\n---\ntitle: t\n# heading\n';
    const doc = parseFrontmatter(text);
    expect(doc).toMatchObject({ present: false, opened: true, data: {}, body: text, lineCount: 0 });
    expect(doc.problems).toEqual([{ line: 2, message: 'frontmatter opened with --- on line 2 is never closed (no --- line after it)' }]);
    // A file that does not open with --- has no frontmatter and no problem.
    expect(parseFrontmatter('# title\n---\n')).toMatchObject({ present: false, opened: false, problems: [] });
  });

  it('an empty block is present and empty; the closing line may carry trailing blanks but not text', () => {
    expect(parseFrontmatter('---\n---\nbody')).toMatchObject({ present: true, data: {}, body: 'body', lineCount: 2, problems: [] });
    expect(splitFrontmatter('---\na: 1\n---  \nbody')).toMatchObject({ closed: true, body: 'body' });
    expect(splitFrontmatter('---\na: 1\n--- not a fence\n')).toMatchObject({ opened: true, closed: false });
  });
});

describe('the one value reader: dialects', () => {
  const block = ['---', 'version: 1', 'confidence: 0.8', 'gone: null', 'empty:', 'sources:', '  - session_id: s1', '    exploration_id: exp_1', 'source:', '  session_id: s1', 'tags: [a, , "b c"]', 'details: {"k": 1}', '---', ''].join('\n');

  it('maestro-flow keeps numbers and null as strings, reads `key:` alone as a list and `- k: v` as a string', () => {
    expect(parseFrontmatter(block).data).toEqual({
      version: '1',
      confidence: '0.8',
      gone: 'null',
      empty: [],
      sources: ['session_id: s1'],
      source: { session_id: 's1' },
      tags: ['a', 'b c'],
      details: { k: 1 },
    });
    // The continuation line of the map item is not maestro-flow's: reported, with its line.
    expect(parseFrontmatter(block).problems.map((p) => p.line)).toEqual([8]);
  });

  it('wiki types numbers and null, reads `key:` alone as null and `- k: v` as a map', () => {
    const doc = parseFrontmatter(block, { dialect: 'wiki' });
    expect(doc.problems).toEqual([]);
    expect(doc.data).toEqual({
      version: 1,
      confidence: 0.8,
      gone: null,
      empty: null,
      sources: [{ session_id: 's1', exploration_id: 'exp_1' }],
      source: { session_id: 's1' },
      tags: ['a', 'b c'],
      details: { k: 1 },
    });
    // `- proj:app` (no space after the colon) is a tag, not a map.
    expect(parseFrontmatter('---\ntags:\n  - proj:app\n---\n', { dialect: 'wiki' }).data.tags).toEqual(['proj:app']);
  });

  it('yaml reads full YAML and says where it is broken, in file lines', () => {
    const ok = parseFrontmatter('---\ndecisions:\n  - {accepted: "flow map"}\nsummary: |\n  two\n  lines\n---\n', { dialect: 'yaml' });
    expect(ok.data).toEqual({ decisions: [{ accepted: 'flow map' }], summary: 'two\nlines\n' });
    const bad = parseFrontmatter('\n---\nverdict: ready\nsummary: [unclosed\n---\n', { dialect: 'yaml' });
    expect(bad.data).toEqual({});
    expect(bad.problems[0]!.line).toBeGreaterThanOrEqual(4);
    expect(bad.problems[0]!.message).toMatch(/^frontmatter is not valid YAML \(column \d+\)$/);
  });

  it('yaml names the line and column of an error, and quotes nothing of the text', () => {
    // The yaml package's message would quote the rest of the line: `Not a YAML token: TOPSECRET-1234`.
    const secret = '---\nverdict: ready\n> TOPSECRET-1234\n---\n';
    const read = parseFrontmatter(secret, { dialect: 'yaml' });
    expect(read.problems[0]).toEqual({ line: 3, message: 'frontmatter is not valid YAML (column 1)' });
    expect(JSON.stringify(read)).not.toContain('TOPSECRET');
    let refused: Error | undefined;
    try {
      parseReport(secret, '/r/report.md');
    } catch (err) {
      refused = err as Error;
    }
    expect(refused?.message).toBe('/r/report.md:3: frontmatter is not valid YAML (column 1).');
    // An alias with no anchor is named without the alias: `Unresolved alias (…): TOPSECRET`.
    expect(parseFrontmatter('---\nverdict: *TOPSECRET\n---\n', { dialect: 'yaml' }).problems).toEqual([{ line: 2, message: 'frontmatter YAML cannot be loaded: Unresolved alias (the anchor must be set before the alias)' }]);
  });

  it('report.md errors name the file and the line', () => {
    expect(() => parseReport('---\nverdict: ready\ndecisions: [a\n---\n', '/r/report.md')).toThrow(/^\/r\/report\.md:3: frontmatter is not valid YAML/);
    expect(() => parseReport('---\nverdict: ready\n', '/r/report.md')).toThrow('/r/report.md:1: frontmatter opened with --- on line 1 is never closed');
    expect(parseReport('---\n---\n').verdict).toBe('ready');
  });

  it('a YAML alias bomb is a problem on the block, not a throw; report.md refuses it naming the file', () => {
    const bomb = ['---', 'a: &a [x, x, x, x, x, x, x, x, x]', 'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]', 'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]', 'verdict: [*c]', '---', ''].join('\n');
    const message = 'frontmatter YAML cannot be loaded: Excessive alias count indicates a resource exhaustion attack';
    expect(parseFrontmatter(bomb, { dialect: 'yaml' })).toMatchObject({ data: {}, problems: [{ line: 2, message }] });
    expect(() => parseReport(bomb, '/r/report.md')).toThrow(expect.objectContaining({ code: 'CORRUPT_FILE', message: `/r/report.md:2: ${message}.` }));
  });
});

describe('malformed values: read as maestro-flow reads them, and named with their line', () => {
  it('a list never closed or a map that is not JSON is read as its text and is a problem; a [tag] that closes is not', () => {
    const text = ['---', 'title: [unterminated', 'keywords: {bad json', 'tags:', '  - [half', 'source:', '  session_id: {x', 'name: [WIP] parser', 'ok: {"a": 1}', 'list: [a, b]', '---', ''].join('\n');
    for (const dialect of ['maestro-flow', 'wiki'] as const) {
      const doc = parseFrontmatter(text, { dialect });
      expect(doc.data).toMatchObject({ title: '[unterminated', keywords: '{bad json', tags: ['[half'], source: { session_id: '{x' }, name: '[WIP] parser', ok: { a: 1 }, list: ['a', 'b'] });
      expect(doc.problems).toEqual([
        { line: 2, message: 'title: the value "[unterminated" opens a list with "[" but never closes it; it is read as that text (quote it if text is meant)' },
        { line: 3, message: 'keywords: the value "{bad json" opens a map with "{" but is not JSON; it is read as that text (quote it if text is meant)' },
        { line: 5, message: 'tags: the value "[half" opens a list with "[" but never closes it; it is read as that text (quote it if text is meant)' },
        { line: 7, message: 'source.session_id: the value "{x" opens a map with "{" but is not JSON; it is read as that text (quote it if text is meant)' },
      ]);
      expect(doc.keyLines).toEqual({ title: 2, keywords: 3, tags: 4, source: 6, name: 8, ok: 9, list: 10 });
    }
    // A long value is cut in the message.
    expect(parseFrontmatter(`---\ntitle: [${'x'.repeat(100)}\n---\n`).problems[0]!.message).toBe(`title: the value "[${'x'.repeat(59)}…" opens a list with "[" but never closes it; it is read as that text (quote it if text is meant)`);
  });

  it('a known key of the wrong type is named with its line, what it should be and what the reader does instead; empty values and unknown keys are not', () => {
    const spec = parseFrontmatter(['---', 'title: ["A", "B"]', 'category: {"c": 1}', 'keywords: {"k": 1}', 'readMode:', 'custom: [1, 2]', '---', ''].join('\n'));
    expect(frontmatterProblems(spec, SPEC_FIELDS)).toEqual([
      { key: 'title', line: 2, message: 'title: expected text, got a list; it is read as if it were not there' },
      { key: 'category', line: 3, message: 'category: expected text, got a map; the file gets its category from its name, or none' },
      { key: 'keywords', line: 4, message: "keywords: expected a list (or comma-separated text), got a map; the file's keywords are not read, so its `### [date]` entries are not found by them in search or by a brief's keyword match" },
    ]);
    const knowhow = parseFrontmatter(['---', 'title: Pools', 'status: [deprecated]', 'tags: true', 'keywords: a, b', '---', ''].join('\n'));
    expect(frontmatterProblems(knowhow, KNOWHOW_FIELDS).map((p) => [p.line, p.message])).toEqual([
      [3, 'status: expected text, got a list; the document reads as active, so search and briefs still offer it'],
      [4, 'tags: expected a list (or comma-separated text), got true; its tags are not read, so search does not find the document by them'],
    ]);
    const wiki = parseFrontmatter(['---', 'id: 7', 'request: ["a", "b"]', 'version: draft', 'extraction_confidence: "0.8"', 'source: session', 'sources: {"s": 1}', 'related: []', 'aliases:', '---', ''].join('\n'), { dialect: 'wiki' });
    expect(frontmatterProblems(wiki, WIKI_FIELDS).map((p) => [p.line, p.message])).toEqual([
      [3, "request: expected text, got a list; without a request the entry is not read: search and the observer's lookups skip it"],
      [4, 'version: expected a number, got the text "draft"; it is read as version 1, and the next update writes version 2'],
      [5, 'extraction_confidence: expected an unquoted number, got the text "0.8"; it is read as 0'],
      [7, 'sources: expected a list of maps, got a map; it is read as if it were not there'],
    ]);
  });
});

describe('rewrites keep what Maestro does not know', () => {
  it('setting a knowhow key leaves every other line as it was, CRLF included', () => {
    const out = setFrontmatterKey(KNOWHOW, 'keywords', ['x']);
    expect(out).toBe(KNOWHOW.replace('keywords:\n  - retry\n  - backoff', 'keywords: ["x"]'));
    const added = setFrontmatterKey(KNOWHOW.replace(/\n/g, '\r\n'), 'status', 'deprecated');
    expect(added).toBe(KNOWHOW.replace('lifecycleStatus: reviewed\n', 'lifecycleStatus: reviewed\nstatus: "deprecated"\n').replace(/\n/g, '\r\n'));
    expect(parseFrontmatter(added).data).toMatchObject({ relatedPaths: ['src/net.ts'], lifecycleStatus: 'reviewed', status: 'deprecated' });
    expect(setFrontmatterLine('body\n', 'status', 'open')).toBe('---\nstatus: open\n---\n\nbody\n');
  });

  it('a wiki entry read and written back keeps keys the wiki writer never sets', () => {
    const text = ['---', 'id: "C001"', 'request: "r"', 'reviewer:', '  name: "ana"', 'custom_score: 3', 'links:', '  - "https://x.test/a"', '---', ''].join('\n');
    const doc = parseFrontmatter(text, { dialect: 'wiki' });
    const again = parseFrontmatter(`${renderFrontmatter({ ...doc.data, version: 2 })}\n`, { dialect: 'wiki' });
    expect(again.problems).toEqual([]);
    expect(again.data).toEqual({ id: 'C001', request: 'r', reviewer: { name: 'ana' }, custom_score: 3, links: ['https://x.test/a'], version: 2 });
  });
});

describe('editFrontmatter: only the keys an update sets change', () => {
  const NOTE = ['---', '# reviewed', 'version: 3', "when: '2026-07-01'", 'tags: [a, b]', '', 'links:', '- "https://x.test/a"', '# more below', 'sources:', '    - session_id: "s0"', '      exploration_id: exp_9', '---', 'body', ''].join('\n');

  it('keeps a value that did not change byte for byte, however it was quoted or listed', () => {
    expect(editFrontmatter(NOTE, { version: 3, when: '2026-07-01', tags: ['a', 'b'], links: ['https://x.test/a'], gone: undefined })).toEqual({ head: NOTE.slice(0, -'body\n'.length), body: 'body\n', eol: '\n' });
  });

  it('appends to a block list in its own indentation, rewrites a changed scalar in place, and adds a new key last', () => {
    const { head } = editFrontmatter(NOTE, { version: 4, links: ['https://x.test/a', 'https://x.test/b'], sources: [{ session_id: 's0', exploration_id: 'exp_9' }, { session_id: 's1', exploration_id: 'exp_1' }], intent_key: 'debug' });
    expect(head).toBe(
      NOTE.slice(0, -'body\n'.length)
        .replace('version: 3', 'version: 4')
        .replace('- "https://x.test/a"\n', '- "https://x.test/a"\n- "https://x.test/b"\n')
        .replace('exp_9\n---', 'exp_9\n    - session_id: "s1"\n      exploration_id: "exp_1"\nintent_key: "debug"\n---'),
    );
  });

  it('writes a changed value where it stood, keeps the comments inside it above it, and changes a repeated key where the reader reads it', () => {
    const text = ['---', 'source:', '  # from the first run', '  session_id: "s0"', 'name: a', 'name: b', '---', ''].join('\n');
    expect(editFrontmatter(text, { source: { session_id: 's1' }, name: 'c' }).head).toBe(['---', '  # from the first run', 'source:', '  session_id: "s1"', 'name: a', 'name: "c"', '---', ''].join('\n'));
  });

  it('keeps a byte-order mark, leading blank lines and CRLF, and ends a block closed at the end of the file with its line break', () => {
    expect(editFrontmatter('\uFEFF\n---\r\nid: "C001"\r\nversion: 1\r\n---', { version: 2, status: 'draft' })).toEqual({ head: '\uFEFF\n---\r\nid: "C001"\r\nversion: 2\r\nstatus: "draft"\r\n---\r\n', body: '', eol: '\r\n' });
    expect(editFrontmatter('body\n', { id: 'C001' })).toEqual({ head: '---\nid: "C001"\n---\n', body: 'body\n', eol: '\n' });
  });

  it('setFrontmatterLine leaves no line of the old value behind (nested keys, items after a comment) and keeps its comments', () => {
    expect(setFrontmatterLine('---\nsource:\n  session_id: s0\nx: 1\n---\n', 'source', '"s1"')).toBe('---\nsource: "s1"\nx: 1\n---\n');
    expect(setFrontmatterLine('---\nk:\n  - a\n  # why\n  - b\n# after\n---\n', 'k', '["c"]')).toBe('---\n  # why\nk: ["c"]\n# after\n---\n');
  });
});
