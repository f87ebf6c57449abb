import { describe, expect, it } from 'vitest';
import type { DiffResponse } from '../../api/wire/responses.js';
import { renderDiff } from './taskReview.js';

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
});

