import { appendFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir, TranscriptBuilder, type TempDir } from '../__fixtures__/transcript-builder.js';
import { classifyUserText, collapse, detectToolPhase, ExplorationCutter, IsoTimeParser } from './cutter.js';
import { LineSplitter, readTranscriptFile, TranscriptTail } from './reader.js';

const FIXTURE = fileURLToPath(new URL('../__fixtures__/full-session.jsonl', import.meta.url));

describe('exploration cutting on a transcript with every record type', () => {
  const state = readTranscriptFile(FIXTURE);
  const byId = Object.fromEntries(state.explorations.map((e) => [e.id, e]));

  it('cuts one exploration per real prompt, numbered exp_<n>', () => {
    expect(state.sessionId).toBe('full-session');
    expect(state.explorations.map((e) => [e.id, e.status, e.completionReason])).toEqual([
      ['exp_1', 'complete', 'end_turn'],
      ['exp_2', 'complete', 'end_turn'],
      ['exp_3', 'interrupted', 'interrupted'],
      ['exp_4', 'interrupted', 'superseded'],
      ['exp_5', 'complete', 'result'],
    ]);
  });

  it('reads slash commands and skips the meta expansion', () => {
    expect(byId.exp_2!.question).toBe('/review src/auth');
    expect(byId.exp_2!.slashCommands).toEqual(['/review']);
    expect(state.explorations.some((e) => e.question.includes('expanded slash command'))).toBe(false);
  });

  it('builds tool nodes with phase, files and result status, plus thinking and response nodes', () => {
    const exp2 = byId.exp_2!;
    expect(exp2.nodes.map((n) => [n.type, n.name ?? '', n.status])).toEqual([
      ['thinking', '', 'ok'],
      ['tool', 'Read', 'ok'],
      ['tool', 'Grep', 'error'],
      ['response', '', 'ok'],
    ]);
    expect(exp2.nodes[1]!.label.startsWith('✓ Read /repo/src/auth/session.ts')).toBe(true);
    expect(exp2.nodes[2]!.label).toContain('✗');
    expect(exp2.nodes[2]!.label).toContain('permission denied');
    expect(exp2.files).toEqual(['/repo/src/auth/session.ts', '/repo/src/auth']);
    const exp3 = byId.exp_3!;
    expect(exp3.nodes.filter((n) => n.type === 'tool').map((n) => n.phase)).toEqual(['execute', 'verify']);
    expect(exp3.nodes.find((n) => n.name === 'Bash')!.command).toBe('npm test -- auth');
    expect(exp3.nodes.some((n) => n.type === 'error' && n.label.includes('Overloaded'))).toBe(true);
  });

  it('dedupes tokens by message id (split records repeat usage)', () => {
    expect(byId.exp_2!.tokens).toEqual({ input: 500, output: 100, cacheRead: 0, cacheWrite: 50 });
    expect(byId.exp_1!.tokens).toEqual({ input: 10, output: 5, cacheRead: 100, cacheWrite: 0 });
  });

  it('takes result records, cost, last-prompt and a newer format with extra fields', () => {
    expect(byId.exp_5!.question).toBe('Actually stop, explain how the session store works instead');
    expect(byId.exp_5!.costUsd).toBe(0.0421);
    expect(byId.exp_5!.nodes.map((n) => n.type)).toEqual(['response']);
    expect(state.lastPrompt).toBe('Actually stop, explain how the session store works instead');
    expect(state.ignoredTypes).toEqual({ 'file-history-snapshot': 1, summary: 1 });
    // The compact boundary is the session's, not a question's.
    expect(state.sessionEvents.map((e) => [e.kind, e.line])).toEqual([['compact', 19]]);
  });

  it('reports garbage lines and the torn last line with their line numbers, and keeps going', () => {
    expect(state.issues.map((i) => i.line)).toEqual([26, 27, 28]);
    expect(state.issues[0]!.reason).toMatch(/not JSON/);
    expect(state.issues[1]!.reason).toMatch(/not a JSON object/);
    expect(state.issues[2]!.reason).toMatch(/torn last line/);
    expect(state.explorations).toHaveLength(5);
  });
});

describe('classification helpers', () => {
  it('classifies user texts', () => {
    expect(classifyUserText('[Request interrupted by user]')).toEqual({ kind: 'interrupt' });
    expect(classifyUserText('<local-command-stdout>ok</local-command-stdout>')).toEqual({ kind: 'none' });
    expect(classifyUserText('<command-name>/clear</command-name>')).toEqual({ kind: 'question', text: '/clear', command: '/clear' });
    expect(classifyUserText('\u001b[31m  why   red? \u001b[0m')).toEqual({ kind: 'question', text: 'why red?' });
  });

  it('detects tool phases', () => {
    expect(detectToolPhase('Bash', { command: 'ls src' })).toBe('explore');
    expect(detectToolPhase('Bash', { command: 'npx vitest run' })).toBe('verify');
    expect(detectToolPhase('Bash', { command: 'npm run build' })).toBe('verify');
    expect(detectToolPhase('MultiEdit', {})).toBe('execute');
    expect(detectToolPhase('Glob', { pattern: '*.ts' })).toBe('explore');
  });
});

describe('TranscriptTail follows a live file', () => {
  let dir: TempDir;
  afterEach(() => dir.cleanup());

  it('handles appends, a torn last line, truncation and replacement', () => {
    dir = tempDir();
    const path = join(dir.path, 'live.jsonl');
    const b = new TranscriptBuilder();
    b.user('where is the config loaded').writeTo(path);
    const tail = new TranscriptTail(path);
    expect(tail.poll().changed).toBe(true);
    expect(tail.state.explorations.map((e) => e.status)).toEqual(['running']);

    // A torn write: half a record, then the rest.
    const line = b.turn({ answer: 'In src/config.ts' }).take();
    appendFileSync(path, line.slice(0, 40));
    tail.poll();
    expect(tail.state.explorations[0]!.status).toBe('running');
    expect(tail.state.issueCount).toBe(0);
    appendFileSync(path, line.slice(40));
    tail.poll();
    expect(tail.state.explorations[0]!.status).toBe('complete');

    // Nothing new: no change.
    expect(tail.poll().changed).toBe(false);

    // Truncation restarts from byte 0.
    writeFileSync(path, new TranscriptBuilder().user('a new first question').take());
    const truncated = tail.poll();
    expect(truncated.reset).toBe(true);
    expect(tail.state.explorations.map((e) => e.question)).toEqual(['a new first question']);

    // Replacement by rename (a new inode), even when larger.
    const other = join(dir.path, 'other.jsonl');
    const r = new TranscriptBuilder();
    r.user('replaced one').turn({ answer: 'x' }).user('replaced two').writeTo(other);
    renameSync(other, path);
    expect(tail.poll().reset).toBe(true);
    expect(tail.state.explorations.map((e) => e.question)).toEqual(['replaced one', 'replaced two']);
  });
});

describe('the fast path for long tool-result lines', () => {
  it('gives exactly the result of a full parse', () => {
    const big = 'línea "quoted" \\ back\\slash \u2028 '.repeat(200);
    const lines = [
      { type: 'user', message: { content: 'read three files' } },
      { type: 'assistant', message: { id: 'm1', content: [1, 2, 3, 4, 5].map((i) => ({ type: 'tool_use', id: `t${i}`, name: 'Read', input: { file_path: `f${i}.ts` } })), usage: { input_tokens: 1 } } },
      // string content, with escapes and a fake "tool_use_id" inside the text
      { type: 'user', message: { content: [{ tool_use_id: 't1', type: 'tool_result', content: `{"tool_use_id":"t9"} ${big}` }] }, toolUseResult: { stdout: big } },
      // array content, an error
      { type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 't2', is_error: true, content: [{ type: 'text', text: `boom ${big}` }] }] } },
      // two results on one line: must fall back to the full parse
      { type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 't3', content: big }, { type: 'tool_result', tool_use_id: 't4', content: `x${big}` }] } },
      // 2–6 KiB of bytes but under 2,048 chars (multi-byte text): decided by the char count, as pushLine does
      { type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 't5', content: 'ünïcødé\n\n  '.repeat(140) }] } },
      { type: 'assistant', message: { id: 'm2', content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn' } },
    ].map((r) => JSON.stringify(r));
    const parse = (fast: boolean) => {
      const c = new ExplorationCutter('s', () => 0, fast);
      for (const l of lines) c.pushLine(l);
      return c.state;
    };
    const fast = parse(true);
    expect(fast).toEqual(parse(false));
    // The reader's byte path: the same result from raw UTF-8 lines, also split into odd-sized chunks
    // (cuts inside multi-byte chars and inside lines).
    const bytes = Buffer.from(lines.join('\n') + '\n', 'utf8');
    for (const size of [7, 1000, 4093, bytes.length]) {
      const c = new ExplorationCutter('s', () => 0, true);
      const splitter = new LineSplitter();
      for (let at = 0; at < bytes.length; at += size) splitter.push(bytes.subarray(at, at + size), (line) => c.pushBytes(line));
      expect(splitter.pending).toBeNull();
      expect(c.state).toEqual(fast);
    }
    expect(fast.explorations[0]!.nodes.map((n) => n.status)).toEqual(['ok', 'error', 'ok', 'ok', 'ok', 'ok']);
    expect(fast.explorations[0]!.nodes[0]!.label).toContain('✓ Read f1.ts — {"tool_use_id":"t9"} línea "quoted"');
  });
});

describe('collapse', () => {
  it('strips ANSI colours and folds every run of whitespace to one space', () => {
    const reference = (t: string) => t.replace(/\u001b\[[0-9;]*[A-Za-z]/g, '').replace(/\s+/g, ' ').trim();
    const samples = ['plain words only', ' lead and trail ', 'two  spaces', 'tab\there', 'line\nbreak', '\u001b[32m✓\u001b[39m 12 passed', 'nbsp\u00a0x', 'a \u2028 b', '', '   '];
    for (const s of samples) expect(collapse(s)).toBe(reference(s));
    expect(collapse('\u001b[1mbold\u001b[0m  and\t\ttabs')).toBe('bold and tabs');
  });
});

describe('IsoTimeParser', () => {
  it('gives what Date.parse gives, for transcript timestamps and anything else', () => {
    const p = new IsoTimeParser();
    const samples = [
      '2026-11-01T00:00:00.000Z', '2026-11-01T00:00:59.999Z', '2026-11-01T00:01:00.700Z', '2026-11-01T00:01:07.042Z',
      '2024-02-29T23:59:59.123Z', '2026-02-30T10:00:00.000Z', '2026-13-01T00:00:00.000Z', '2026-11-01T24:00:00.000Z', '2026-11-01T24:00:01.000Z', '2026-11-01T24:00:00.500Z',
      '2026-11-01T00:00:60.000Z', '2026-11-01T00:00:0x.000Z', '2026-11-01T00:00:00.00xZ', '2026-11-01T00:00:00Z',
      '2026-11-01T00:00:00.000+01:00', 'yesterday', '', '2026-11-01 00:00:00.000Z', 'Nov 1 2026 10:00:05.123Z', '2026-11-01T00:00:00.000z',
    ];
    for (const s of [...samples, ...samples]) expect(Object.is(p.parse(s), Date.parse(s)), s).toBe(true);
  });
});
