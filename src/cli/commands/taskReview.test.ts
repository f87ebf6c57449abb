import { describe, expect, it } from 'vitest';
import type { DiffResponse, FindingsResponse } from '../../api/wire/responses.js';
import { describeEvidence, renderDiff, renderStat } from './taskReview.js';

const plain = (_codes: string, text: string) => text;
const file = (over: Partial<DiffResponse['files'][number]>): DiffResponse['files'][number] => ({
  path: 'a.txt', oldPath: null, status: 'modified', oldMode: '100644', newMode: '100644', binary: false, additions: 0, deletions: 0, collapsed: false, hunks: [], link: null, ...over,
});

describe('task diff', () => {
  it('says a mode change, a symlink and a missing final newline as git does', () => {
    const diff: DiffResponse = {
      taskId: 't', version: 1, branch: 'maestro/t-v1', base: 'b'.repeat(40), head: 'h'.repeat(40), totals: { files: 3, additions: 2, deletions: 1 },
      files: [
        file({ path: 'run.sh', newMode: '100755' }),
        file({ path: 'link', status: 'added', oldMode: null, newMode: '120000', additions: 1, hunks: [{ header: '@@ -0,0 +1 @@', oldStart: 0, oldLines: 0, newStart: 1, newLines: 1, lines: [{ kind: 'add', text: '../secret', oldLine: null, newLine: 1, noNewline: true }] }] }),
        file({ path: 'b.txt', additions: 1, deletions: 1, hunks: [{ header: '@@ -1 +1 @@', oldStart: 1, oldLines: 1, newStart: 1, newLines: 1, lines: [{ kind: 'del', text: 'b', oldLine: 1, newLine: null }, { kind: 'add', text: 'b', oldLine: null, newLine: 1, noNewline: true }] }] }),
      ],
    } as DiffResponse;
    const out = renderDiff(diff, plain);
    expect(out.split('\n')[0]).toBe(`maestro/t-v1  v1  bbbbbbbbbb..hhhhhhhhhh  3 files, +2 -1`);
    expect(out).toContain('M run.sh  (modified)\nold mode 100644\nnew mode 100755\n');
    expect(out).not.toContain('--- a/run.sh');
    expect(out).toContain('new file mode 120000\n--- /dev/null\n+++ b/link\n@@ -0,0 +1 @@\n+../secret\n\\ No newline at end of file\n');
    expect(out).toContain('@@ -1 +1 @@\n-b\n+b\n\\ No newline at end of file\n');
  });

  it("shows what an agent wrote without letting the terminal run it: escape sequences, a carriage return, a NUL", () => {
    const diff = {
      taskId: 't', version: 1, branch: 'maestro/t-v1', base: 'b'.repeat(40), head: 'h'.repeat(40), totals: { files: 1, additions: 3, deletions: 0 },
      files: [file({ path: 'x\u001b[2K.ts', status: 'added', oldMode: null, additions: 3, hunks: [{ header: '@@ -0,0 +1,3 @@', oldStart: 0, oldLines: 0, newStart: 1, newLines: 3, lines: [
        { kind: 'add', text: 'evil(); // \u001b[1A\u001b[2K', oldLine: null, newLine: 1 },
        { kind: 'add', text: 'hidden()\rok()', oldLine: null, newLine: 2 },
        { kind: 'add', text: 'crlf();\r', oldLine: null, newLine: 3 },
      ] }] })],
    } as DiffResponse;
    const out = renderDiff(diff, plain);
    expect(out.split('\n')[0]).toBe(`maestro/t-v1  v1  bbbbbbbbbb..hhhhhhhhhh  1 file, +3 -0`);
    expect(out).not.toMatch(/[\u0000-\u0008\u000b-\u001f]/);
    expect(out).toContain('+++ b/x\\u{1b}[2K.ts\n');
    expect(out).toContain('+evil(); // \\u{1b}[1A\\u{1b}[2K\n+hidden()\\u{d}ok()\n+crlf();\u240d\n');
  });

  it('prints a file name on one line in --stat and in the file headers, a line break in it shown as \\u{a}', () => {
    const forged = 'docs.md  +1 -0\n1 file changed, 1 insertion(+), 0 deletions(-)';
    const shown = 'docs.md  +1 -0\\u{a}1 file changed, 1 insertion(+), 0 deletions(-)';
    const diff = {
      taskId: 't', version: 1, branch: 'maestro/t-v1', base: 'b'.repeat(40), head: 'h'.repeat(40), totals: { files: 2, additions: 2, deletions: 1 },
      files: [
        file({ path: forged, status: 'added', oldMode: null, additions: 1, hunks: [{ header: '@@ -0,0 +1 @@', oldStart: 0, oldLines: 0, newStart: 1, newLines: 1, lines: [{ kind: 'add', text: 'hi', oldLine: null, newLine: 1 }] }] }),
        // A rename from one such name to another, and the function name git puts after @@ (a line of the file).
        file({ path: 'b\tc.ts', oldPath: 'a\n.ts', status: 'renamed', additions: 1, deletions: 1, hunks: [{ header: '@@ -1 +1 @@ f() \u001b[2J', oldStart: 1, oldLines: 1, newStart: 1, newLines: 1, lines: [{ kind: 'del', text: 'x', oldLine: 1, newLine: null }, { kind: 'add', text: 'y', oldLine: null, newLine: 1 }] }] }),
      ],
    } as DiffResponse;
    expect(renderStat(diff, plain).split('\n')).toEqual([`commit ${'h'.repeat(40)}`, `A  ${shown}  +1 -0`, 'R  a\\u{a}.ts → b\\u{9}c.ts  +1 -1', '2 files changed, 2 insertions(+), 1 deletion(-)', '']);
    expect(renderDiff(diff, plain).split('\n').slice(2)).toEqual([
      '', `A ${shown}  (added)`, '--- /dev/null', `+++ b/${shown}`, '@@ -0,0 +1 @@', '+hi',
      '', 'R a\\u{a}.ts → b\\u{9}c.ts  (renamed)', '--- a/a\\u{a}.ts', '+++ b/b\\u{9}c.ts', '@@ -1 +1 @@ f() \\u{1b}[2J', '-x', '+y', '',
    ]);
  });
});

describe('task show: checks and findings', () => {
  it("keeps a finding's lines under its first one, and its file name, a check's name and command on one line", () => {
    const finding = (over: Partial<FindingsResponse['findings'][number]>) => ({ reviewer: 'code', severity: 'medium', file: null, line: null, message: '', runId: 'r1', round: 1, ...over });
    const review: FindingsResponse = {
      taskId: 't', version: 1,
      verdicts: [{ reviewer: 'code', verdict: 'approve', summary: 'ok', runId: 'r1', round: 1 }],
      findings: [
        finding({ file: 'docs.md\nSTATUS: done', line: 3, message: 'Null check missing.\nSTATUS: all files reviewed, the change only touches docs/README.md\r\n\n  if (!x) return;\n' }),
        finding({ severity: 'low', message: 'One line.' }),
      ],
    };
    const checks = { taskId: 't', version: 1, checks: [{ name: 'test\nSTATUS: passed', command: 'npm test\n✓ all', status: 'passed' as const, exitCode: 0, durationMs: 1200, outputTail: '', runId: 'r1' }] };
    expect(describeEvidence([], 't', checks, review).split('\n')).toEqual([
      '  checks:',
      '    ✓ test\\u{a}STATUS: passed passed 1.2 s  $ npm test\\u{a}✓ all',
      '  review 1 (the latest):',
      '    code: approve — ok',
      '    [medium, code] docs.md\\u{a}STATUS: done:3: Null check missing.',
      '      STATUS: all files reviewed, the change only touches docs/README.md',
      '',
      '        if (!x) return;',
      '    [low, code] One line.',
    ]);
  });
});
