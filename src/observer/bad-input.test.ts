/**
 * Bad input, end to end: malformed and truncated transcripts, lines past the
 * reader's limit, bundles of another schema version or another workspace,
 * a wiki root that is a file, `--session` on a folder. Each is reported with
 * where it is (file, line) and nothing that was not understood is rewritten.
 */
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LineSplitter } from '../lib/lines.js';
import { tempDir, TranscriptBuilder, type TempDir } from './__fixtures__/transcript-builder.js';
import { isMaestroError } from '../core/errors.js';
import { resolveObserverConfig } from './config.js';
import { observeOnce, openObserverSession } from './observe.js';
import { checkWikiRoot, encodeProjectPath, locateSession } from './paths.js';
import { ObserverSession } from './session.js';
import { readTranscriptFile } from './transcript/reader.js';

let dir: TempDir;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.cleanup());

function toolResultLine(id: string, bytes: number, error = false): string {
  const body = 'x'.repeat(bytes);
  return JSON.stringify({ type: 'user', message: { role: 'user', content: [{ tool_use_id: id, type: 'tool_result', content: body, ...(error ? { is_error: true } : {}) }] }, timestamp: '2026-11-20T10:00:05.000Z', toolUseResult: { stdout: body } });
}

describe('transcripts the reader cannot fully use', () => {
  it('reports malformed lines and a truncated last line with their line numbers, and keeps the rest', () => {
    const path = join(dir.path, 's.jsonl');
    const b = new TranscriptBuilder();
    b.user('first question').turn({ answer: 'one' });
    writeFileSync(path, `${b.take()}{"type":"user","message":\n[1,2]\n${new TranscriptBuilder().user('second question').take()}{"type":"assistant","mess`);
    const state = readTranscriptFile(path);
    expect(state.explorations.map((e) => e.question)).toEqual(['first question', 'second question']);
    expect(state.issues.map((i) => [i.line, i.reason.split(' (')[0]])).toEqual([
      [3, 'not JSON'],
      [4, 'not a JSON object'],
      [6, 'torn last line'],
    ]);
  });

  it('a line that is not JSON is reported with its line and column, quoting nothing of it', () => {
    const path = join(dir.path, 'secret.jsonl');
    // JSON.parse's own message would quote the line: `Unexpected token 'T', "TOPSECRET-1234" is not valid JSON`.
    writeFileSync(path, `TOPSECRET-1234\n{"type":"user","message":\n${new TranscriptBuilder().user('a question').take()}`);
    const state = readTranscriptFile(path);
    expect(state.explorations.map((e) => e.question)).toEqual(['a question']);
    expect(state.issues).toEqual([
      { line: 1, reason: 'not JSON (column 1)' },
      { line: 2, reason: 'not JSON (it ends early)' },
    ]);
    expect(JSON.stringify(state.issues)).not.toContain('TOPSECRET');
  });

  it('a line past the limit is skipped with its number and size, in bounded memory; a tool result still closes its tool', () => {
    const path = join(dir.path, 'huge.jsonl');
    const b = new TranscriptBuilder(Date.parse('2026-11-20T10:00:00.000Z'));
    b.user('read the dump').raw(JSON.stringify({ type: 'assistant', timestamp: '2026-11-20T10:00:02.000Z', message: { id: 'm1', role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_big', name: 'Read', input: { file_path: 'dump.sql' } }], stop_reason: 'tool_use' } }));
    b.raw(toolResultLine('toolu_big', 300_000, true));
    b.raw(JSON.stringify({ type: 'system', timestamp: '2026-11-20T10:00:06.000Z', note: 'y'.repeat(300_000) }));
    b.turn({ answer: 'It is a dump of the orders table.' });
    writeFileSync(path, b.take());
    // A 256 KiB limit stands in for the real 64 MiB one (lib/lines.ts), so the test stays small.
    const state = readTranscriptFile(path, { maxLineBytes: 256 * 1024 });
    const e = state.explorations[0]!;
    expect(e.status).toBe('complete');
    expect(e.nodes.find((n) => n.toolUseId === 'toolu_big')).toMatchObject({ status: 'error' });
    expect(state.issues).toEqual([
      { line: 3, reason: expect.stringMatching(/^line of \d{6} bytes \(0\.\d MiB\) is over the line limit; read as the result of toolu_big without its content$/) },
      { line: 4, reason: expect.stringMatching(/^line of \d{6} bytes \(0\.\d MiB\) is over the line limit; skipped$/) },
    ]);
    expect(state.lines).toBe(5);
  });

  it('the line splitter joins a line split over many chunks once, and the same bytes give the same lines in any chunking', () => {
    const lines = ['{"a":1}', 'x'.repeat(5_000), '', 'é'.repeat(3_000), '{"b":2}'];
    const bytes = Buffer.from(`${lines.join('\n')}\n`, 'utf8');
    for (const size of [1, 7, 1024, bytes.length]) {
      const got: string[] = [];
      const splitter = new LineSplitter();
      for (let at = 0; at < bytes.length; at += size) splitter.push(bytes.subarray(at, at + size), (l) => got.push(l.toString('utf8')));
      expect(got, `chunk ${size}`).toEqual(lines);
      expect(splitter.lines).toBe(5);
    }
    // Over the limit: reported once, with the watched pattern seen across a chunk boundary.
    const big = Buffer.from(`${'a'.repeat(100)}"is_error":true${'b'.repeat(100)}\nok\n`);
    const over: Array<{ line: number; bytes: number; seen: boolean[]; head: string }> = [];
    const kept: string[] = [];
    const splitter = new LineSplitter({ maxLineBytes: 64, headBytes: 16, watch: [Buffer.from('"is_error":true')] });
    for (let at = 0; at < big.length; at += 10) splitter.push(big.subarray(at, at + 10), (l) => kept.push(l.toString()), (o) => over.push({ ...o, head: o.head.toString() }));
    expect(over).toEqual([{ line: 1, bytes: 215, seen: [true], head: 'a'.repeat(16) }]);
    expect(kept).toEqual(['ok']);
  });
});

describe('bundles and wikis this observer did not write for this workspace', () => {
  function transcript(): string {
    const jsonl = join(dir.path, 's.jsonl');
    new TranscriptBuilder().user('where is the config loaded?').turn({ tools: [{ name: 'Grep', input: { pattern: 'config' } }], answer: 'src/config.ts' }).writeTo(jsonl);
    return jsonl;
  }

  it('a bundle of another schema version is reported with its file and left exactly as it is', async () => {
    const wiki = join(dir.path, 'wiki');
    const path = join(wiki, 'sessions', 's', 'bundle.json');
    mkdirSync(join(path, '..'), { recursive: true });
    const v2 = JSON.stringify({ schemaVersion: 2, meta: { sessionId: 's' }, future: true });
    writeFileSync(path, v2);
    const session = new ObserverSession({ sessionId: 's', jsonlPath: transcript(), wikiRoot: wiki, workspaceRoot: dir.path, projectSlug: 'app' });
    session.readOnce();
    await session.step();
    expect(readFileSync(path, 'utf8')).toBe(v2);
    expect(readdirSync(join(wiki, 'sessions', 's'))).toEqual(['bundle.json']);
    const view = session.view();
    expect(view.hold).toMatchObject({ reason: 'unknown_schema' });
    expect(view.hold!.detail).toContain(`${path}: schemaVersion 2 is not one this observer reads (1)`);
    expect(view.explorations).toHaveLength(1);
  });

  it('an unreadable bundle names the line and column of the JSON error, and quotes nothing of the file', () => {
    const wiki = join(dir.path, 'wiki');
    const path = join(wiki, 'sessions', 's', 'bundle.json');
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, '{\n  "schemaVersion": 1,\n  "meta": {,\n}');
    const session = new ObserverSession({ sessionId: 's', jsonlPath: transcript(), wikiRoot: wiki, workspaceRoot: dir.path, projectSlug: 'app' });
    expect(session.loadResult.detail).toContain(`${path}: not valid JSON (line 3, column 12)`);
    writeFileSync(path, 'TOPSECRET-1234');
    const secret = new ObserverSession({ sessionId: 's', jsonlPath: transcript(), wikiRoot: wiki, workspaceRoot: dir.path, projectSlug: 'app' });
    expect(secret.loadResult).toMatchObject({ status: 'corrupted', reason: 'parse_error', detail: expect.stringContaining(`${path}: not valid JSON (line 1, column 1)`) });
    expect(secret.loadResult.detail).not.toContain('TOPSECRET');
  });

  it('a wiki written for another workspace root is reported and left alone; --adopt-wiki takes it over and keeps its summaries', async () => {
    const wiki = join(dir.path, 'wiki');
    const jsonl = transcript();
    const other = join(dir.path, 'other-checkout');
    mkdirSync(other);
    const first = new ObserverSession({ sessionId: 's', jsonlPath: jsonl, wikiRoot: wiki, workspaceRoot: other, projectSlug: 'app', now: () => 1_000 });
    first.readOnce();
    await first.step();
    const index = readFileSync(join(wiki, 'sessions', '_index.json'), 'utf8');
    const bundle = readFileSync(join(wiki, 'sessions', 's', 'bundle.json'), 'utf8');

    const here = new ObserverSession({ sessionId: 's', jsonlPath: jsonl, wikiRoot: wiki, workspaceRoot: dir.path, projectSlug: 'app', now: () => 2_000 });
    here.readOnce();
    await here.step();
    expect(readFileSync(join(wiki, 'sessions', '_index.json'), 'utf8')).toBe(index);
    expect(readFileSync(join(wiki, 'sessions', 's', 'bundle.json'), 'utf8')).toBe(bundle);
    expect(readdirSync(join(wiki, 'sessions', 's'))).toEqual(['bundle.json']);
    const view = here.view();
    expect(view.hold!.reason).toBe('workspace_mismatch');
    expect(view.hold!.detail).toContain(`belongs to ${other}, not ${dir.path}`);
    expect(view.hold!.detail).toContain('maestro observe --adopt-wiki');
    // The stored summary is shown, not lost.
    expect(view.explorations[0]!.summary?.text).toContain('where is the config loaded?');

    const adopted = new ObserverSession({ sessionId: 's', jsonlPath: jsonl, wikiRoot: wiki, workspaceRoot: dir.path, projectSlug: 'app', now: () => 3_000, adoptWiki: true });
    adopted.readOnce();
    await adopted.step();
    const after = JSON.parse(readFileSync(join(wiki, 'sessions', 's', 'bundle.json'), 'utf8'));
    expect(after.meta.workspaceRoot).toBe(dir.path);
    expect(after.explorations.exp_1.summary.savedAt).toBe(1_000);
    expect(JSON.parse(readFileSync(join(wiki, 'sessions', '_index.json'), 'utf8')).workspaceRoot).toBe(dir.path);
  });

  it('keys another writer added to a bundle survive when the next turn rewrites it, at every level', async () => {
    const wiki = join(dir.path, 'wiki');
    const jsonl = transcript();
    const path = join(wiki, 'sessions', 's', 'bundle.json');
    const observeOnce = async () => {
      const session = new ObserverSession({ sessionId: 's', jsonlPath: jsonl, wikiRoot: wiki, workspaceRoot: dir.path, projectSlug: 'app' });
      session.readOnce();
      await session.step();
    };
    await observeOnce();
    const extended = JSON.parse(readFileSync(path, 'utf8'));
    extended.x_top = { by: 'another writer' };
    extended.meta.x_meta = 'meta';
    extended.session.x_session = ['session'];
    extended.session.flow.x_flow = 7;
    extended.curation.x_cur = { nested: { kept: true } };
    extended.explorations.exp_1.x_exp = null;
    writeFileSync(path, JSON.stringify(extended, null, 2));

    new TranscriptBuilder(Date.parse('2026-11-20T11:00:00.000Z')).user('and where are the defaults?').turn({ answer: 'src/defaults.ts' }).appendTo(jsonl);
    await observeOnce();
    const after = JSON.parse(readFileSync(path, 'utf8'));
    expect(Object.keys(after.explorations)).toEqual(['exp_1', 'exp_2']);
    expect(after).toMatchObject({
      x_top: { by: 'another writer' },
      meta: { sessionId: 's', x_meta: 'meta' },
      session: { x_session: ['session'], flow: { x_flow: 7 } },
      curation: { x_cur: { nested: { kept: true } } },
      explorations: { exp_1: { x_exp: null } },
    });
  });
});

describe('paths that are not what they should be', () => {
  it('FLOW_WIKI_DIR pointing at a file is refused, naming the path and the fix', () => {
    const file = join(dir.path, 'notes.txt');
    writeFileSync(file, 'x');
    const env = { FLOW_WIKI_DIR: file, FLOW_PROJECT_DIR: dir.path };
    const config = resolveObserverConfig(env, dir.path);
    try {
      openObserverSession(config, { session: transcriptPath() });
      expect.unreachable();
    } catch (err) {
      expect(isMaestroError(err, 'BAD_INPUT')).toBe(true);
      expect((err as Error).message).toBe(`The observer wiki must be a folder: ${file} is a file. Fix: point FLOW_WIKI_DIR at a folder (created if missing), or unset it to use ./wiki.`);
    }
    expect(() => checkWikiRoot(join(file, 'wiki'), env)).toThrow(`${file} is a file, so ${join(file, 'wiki')} cannot be a folder`);
    expect(readFileSync(file, 'utf8')).toBe('x');
  });

  it('--session on a folder says it is a folder and where the transcripts are', () => {
    const folder = join(dir.path, 'sessions');
    mkdirSync(folder);
    const claude = join(dir.path, 'claude');
    expect(() => locateSession({ env: { CLAUDE_CONFIG_DIR: claude }, workspaceRoot: dir.path, cwd: dir.path, session: folder })).toThrow(
      `--session ${folder}: ${folder} is a folder, not a transcript. Pass a session id, or the path of a .jsonl file (this project's are in ${join(claude, 'projects')}`,
    );
    expect(() => locateSession({ env: { CLAUDE_CONFIG_DIR: claude }, workspaceRoot: dir.path, cwd: dir.path, session: 'sessions' })).toThrow(/is a folder, not a transcript/);
  });

  it('a transcript whose name is no session id (`...jsonl`) is not a session: its bundle never lands outside sessions/', async () => {
    const repo = join(dir.path, 'repo');
    mkdirSync(repo);
    const claude = join(dir.path, 'claude');
    const wiki = join(dir.path, 'wiki');
    const env = { CLAUDE_CONFIG_DIR: claude, FLOW_PROJECT_DIR: repo, FLOW_WIKI_DIR: wiki };
    const config = resolveObserverConfig(env, repo);
    const folder = join(claude, 'projects', encodeProjectPath(config.workspaceRoot));
    // Session "..": its bundle, a person's prompts and answers, was written as wiki/bundle.json.
    new TranscriptBuilder().user('a question of the person').turn({ answer: 'ok' }).writeTo(join(folder, '...jsonl'));
    expect(() => openObserverSession(config)).toThrow(/No Claude Code session with a user line/);
    const named = join(folder, '...jsonl');
    expect(() => openObserverSession(config, { session: named })).toThrow(`--session ${named}: ".." cannot be a session id`);
    expect(() => openObserverSession(config, { session: named, restore: true })).toThrow(`--session ${named}: ".." cannot be a session id`);
    expect(() => openObserverSession(config, { session: '..', restore: true })).toThrow(/is a folder, not a transcript/);
    new TranscriptBuilder().user('the real session').turn({ answer: 'ok' }).writeTo(join(folder, '3f2a9c1e-5b7d-4e8a-9c0f-1a2b3c4d5e6f.jsonl'));
    const { view } = await observeOnce(config);
    expect(view.sessionId).toBe('3f2a9c1e-5b7d-4e8a-9c0f-1a2b3c4d5e6f');
    expect(readdirSync(wiki).sort()).toEqual(['knowledge', 'sessions']);
  });

  function transcriptPath(): string {
    const jsonl = join(dir.path, 't.jsonl');
    new TranscriptBuilder().user('q').writeTo(jsonl);
    return jsonl;
  }
});
