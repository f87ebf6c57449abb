/**
 * The run's line files (outbox.ndjson, transcript.jsonl) on a disk that fills, on a real small tmpfs. A
 * line that does not fit is written in part (the kernel writes what fits, then says ENOSPC); the part
 * stayed, with no newline, and the writer's next line, written once there was room again and reported as
 * written, was glued to it: one line that is not JSON, and that record lost (a run's result, say). Now a
 * failed append takes its part back off, so the next line starts on a line of its own.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appendJsonLine, readJsonLines } from '../../src/executor/protocol/files.js';
import { applyPlan } from '../../src/knowledge/lifecycle/audit/apply.js';
import type { PlanAction } from '../../src/knowledge/lifecycle/audit/context.js';
import { appendKnowledgeLog } from '../../src/observer/wiki/log.js';
import { tempDir } from '../helpers/db.js';
import { project, SPEC_FILE } from '../helpers/knowledge2.js';
import { mountTmpfs, requireTmpfs, type Tmpfs } from './tmpfs.js';

const mountable = requireTmpfs('faults: line files on a full disk');

describe.skipIf(!mountable)('a line file on a full disk', () => {
  let disk: Tmpfs | null = null;
  afterEach(() => {
    disk?.unmount();
    disk = null;
  });

  it('a line that does not fit leaves nothing behind, and the next line after space is freed reads whole', () => {
    disk = mountTmpfs(1);
    const file = join(disk.dir, 'outbox.ndjson');
    appendJsonLine(file, { seq: 1, type: 'phase' });
    const before = readFileSync(file);
    // Full, but for the rest of the file's last page: a longer line goes in part way, up to the page's end.
    disk.fill();
    expect(() => appendJsonLine(file, { seq: 2, type: 'token', text: 'x'.repeat(64 * 1024) })).toThrow(expect.objectContaining({ code: 'ENOSPC' }));
    expect(readFileSync(file)).toEqual(before);
    disk.free();
    appendJsonLine(file, { seq: 3, type: 'result', ok: true });
    const read = readJsonLines<{ seq: number }>(file);
    expect(read.corrupt).toEqual([]);
    expect(read.records.map((r) => r.seq)).toEqual([1, 3]);
    expect(readFileSync(file).subarray(0, before.length)).toEqual(before);
  });
});

/**
 * The knowledge audit's log (`.workflow/.knowledge-audit/audit-log.jsonl`, FORMATS §4.6) and the observer wiki's
 * daily log (`wiki/knowledge/log/<date>.md`, FORMATS §8.5) on a disk that fills: a record that does not fit leaves
 * nothing, and the next one, once there is room, is whole and in the file's format.
 */
describe.skipIf(!mountable)('the audit log and the wiki daily log on a full disk', () => {
  let disk: Tmpfs | null = null;
  afterEach(() => {
    disk?.unmount();
    disk = null;
  });

  it("an audit whose log records do not fit leaves none of them; the next audit's are whole JSON lines", () => {
    const p = project({ specs: false });
    writeFileSync(join(p.root.workflowDir, 'specs', 'coding-conventions.md'), SPEC_FILE);
    const logDir = join(p.root.workflowDir, '.knowledge-audit');
    mkdirSync(logDir);
    disk = mountTmpfs(1, logDir);
    const action = (n: number, target: string, successor: string): PlanAction => ({ id: `P-${n}`, store: 'spec', action: 'deprecate', target_id: target, target_file: '.workflow/specs/coding-conventions.md', successor_id: successor, successor_file: '.workflow/specs/coding-conventions.md', reason: 'exact-duplicate' });
    applyPlan(p.root, [action(1, 'S-20260101-aaaa', 'S-20260102-bbbb')], new Date('2026-08-20T02:19:16.123Z'));
    const log = join(logDir, 'audit-log.jsonl');
    const before = readFileSync(log);
    // Full, but for the rest of the log's last page: a plan of 40 actions logs about 11 KB, and goes in part way.
    disk.fill();
    const big = Array.from({ length: 40 }, (_, i) => (i % 2 ? action(100 + i, 'S-20260101-aaaa', 'S-20260102-bbbb') : action(100 + i, 'S-20260102-bbbb', 'S-20260101-aaaa')));
    expect(() => applyPlan(p.root, big, new Date('2026-08-20T02:20:00.000Z'))).toThrow(expect.objectContaining({ code: 'ENOSPC' }));
    expect(readFileSync(log)).toEqual(before);
    disk.free();
    applyPlan(p.root, [action(3, 'S-20260102-bbbb', 'S-20260101-aaaa')], new Date('2026-08-20T02:21:00.000Z'));
    const lines = readFileSync(log, 'utf8').trimEnd().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { action_id: string }).action_id)).toEqual(['P-1', 'P-3']);
  });

  it('a wiki log entry that does not fit leaves no part of it, a first one not even its heading; the next is in the format', () => {
    const wiki = tempDir('maestro-wiki-');
    const logDir = join(wiki, 'knowledge', 'log');
    mkdirSync(logDir, { recursive: true });
    disk = mountTmpfs(1, logDir);
    const at = (hhmm: string) => new Date(`2026-08-20T${hhmm}:00.000Z`);
    // The day's first entry, then a full disk: neither the day's heading nor part of the entry stays.
    disk.fill();
    expect(() => appendKnowledgeLog(wiki, 'ingest', 'ctx-a', 'y'.repeat(64 * 1024), at('09:00'))).toThrow(expect.objectContaining({ code: 'ENOSPC' }));
    disk.free();
    const path = appendKnowledgeLog(wiki, 'ingest', 'ctx-a', 'first', at('09:01'));
    disk.fill();
    expect(() => appendKnowledgeLog(wiki, 'update', 'ctx-b', 'z'.repeat(64 * 1024), at('09:02'))).toThrow(expect.objectContaining({ code: 'ENOSPC' }));
    disk.free();
    appendKnowledgeLog(wiki, 'skip', 'ctx-c', 'third', at('09:03'));
    expect(readFileSync(path, 'utf8')).toBe('# Knowledge log 2026-08-20\n\n## [09:01] ingest · target: ctx-a · reason: first\n\n## [09:03] skip · target: ctx-c · reason: third\n');
  });
});
