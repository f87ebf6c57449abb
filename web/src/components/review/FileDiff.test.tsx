/**
 * What one file's diff tells a reviewer beyond its lines: a mode change (a file made executable has no
 * lines at all), a symlink, a final line without a newline, a line ending changed to CRLF, an empty file,
 * and, for a screen reader, which lines were added or removed.
 */
import { cleanup, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { DiffFile, DiffLine } from '../../api/types.js';
import { languageOf } from './diffModel.js';
import { FileDiff, gitDiffCommand } from './FileDiff.js';

afterEach(cleanup);

const hunk = (lines: DiffLine[], header = '@@ -1,2 +1,2 @@') => ({ header, oldStart: 1, oldLines: 2, newStart: 1, newLines: 2, lines });
const file = (over: Partial<DiffFile>): DiffFile => ({ path: 'f.txt', oldPath: null, status: 'modified', oldMode: '100644', newMode: '100644', binary: false, additions: 0, deletions: 0, collapsed: false, hunks: [], link: null, ...over });
const noop = () => {};

function show(f: DiffFile, commentable = true) {
  render(<FileDiff file={f} index={0} viewType="unified" current={false} commentable={commentable} comments={[]} findings={[]} loading={false} triedWhole={false} range={{ base: 'a'.repeat(40), head: 'b'.repeat(40) }} onLoadWhole={noop} onAdd={noop} onRemove={noop} />);
  return screen.getByRole('region', { name: f.path });
}

describe('FileDiff', () => {
  it('says a mode-only change: the file became executable', () => {
    const region = show(file({ path: 'run.sh', newMode: '100755' }));
    expect(within(region).getByTestId('file-note').textContent).toBe('Mode: regular file (100644) → executable (100755).');
    expect(region.textContent).toContain('No change to the content.');
  });

  it('says a new file is a symbolic link, and a new executable is one', () => {
    const link = show(file({ path: 'link', status: 'added', oldMode: null, newMode: '120000', additions: 1, hunks: [hunk([{ kind: 'add', text: '../../etc/passwd', oldLine: null, newLine: 1, noNewline: true }], '@@ -0,0 +1 @@')] }));
    expect(within(link).getAllByTestId('file-note').map((n) => n.textContent)).toEqual(['Mode: symbolic link (120000).', 'A symbolic link: its line is the path it points to, not file content.']);
    cleanup();
    // One the daemon judged to point outside the repository says so.
    const out = show(file({ path: 'key', status: 'added', oldMode: null, newMode: '120000', additions: 1, link: { target: '../../../root/.ssh/id_rsa', outside: true }, hunks: [hunk([{ kind: 'add', text: '../../../root/.ssh/id_rsa', oldLine: null, newLine: 1, noNewline: true }], '@@ -0,0 +1 @@')] }));
    expect(within(out).getAllByTestId('file-note').map((n) => n.textContent)).toContain('It points outside the repository: whatever is there when the branch is checked out, not a file of this change.');
    cleanup();
    const tool = show(file({ path: 'tool', status: 'added', oldMode: null, newMode: '100755', additions: 1, hunks: [hunk([{ kind: 'add', text: 'echo', oldLine: null, newLine: 1 }], '@@ -0,0 +1 @@')] }));
    expect(within(tool).getByTestId('file-note').textContent).toBe('Mode: executable (100755).');
  });

  it('shows the target of a link that replaced a binary file, saying the binary side is not shown', () => {
    const region = show(file({ path: 'logo.png', status: 'type_changed', oldMode: '100644', newMode: '120000', binary: true, additions: 1, hunks: [hunk([{ kind: 'add', text: '/etc/passwd', oldLine: null, newLine: 1, noNewline: true }], '@@ -0,0 +1 @@')] }));
    expect(region.textContent).toContain('One side of this change is a binary file, not shown; the other side is below.');
    expect(region.textContent).toContain('/etc/passwd');
    expect(region.textContent).not.toContain('Binary file: not shown.');
  });

  it('says why a file git calls binary is drawn as text: its NUL bytes (drawn as \\u{0}), UTF-16, or the project marking it -diff', () => {
    const nul = show(file({ path: 'app.ts', gitBinary: 'nul_bytes', additions: 1, hunks: [hunk([{ kind: 'add', text: 'a(); // \0', oldLine: null, newLine: 1 }], '@@ -0,0 +1 @@')] }));
    expect(within(nul).getAllByTestId('file-note').map((n) => n.textContent)).toEqual([
      'Git calls this file binary because it holds NUL bytes; it is text, shown here.',
      expect.stringContaining('This change holds characters drawn as nothing'),
    ]);
    expect(nul.textContent).toContain('a(); // \\u{0}');
    cleanup();
    const lock = show(file({ path: 'package-lock.json', gitBinary: 'marked_diff', additions: 1, hunks: [hunk([{ kind: 'add', text: '"resolved": "https://evil.example/x.tgz"', oldLine: null, newLine: 1 }], '@@ -0,0 +1 @@')] }));
    expect(within(lock).getByTestId('file-note').textContent).toBe("The project's .gitattributes marks this file -diff, so git hides its changes; it is text, shown here.");
    expect(lock.textContent).toContain('https://evil.example/x.tgz');
  });

  it('marks the line that ends without a newline, and a carriage return at a line end', () => {
    const region = show(file({ additions: 2, deletions: 2, hunks: [hunk([
      { kind: 'del', text: 'a', oldLine: 1, newLine: null },
      { kind: 'del', text: 'b', oldLine: 2, newLine: null },
      { kind: 'add', text: 'a\r', oldLine: null, newLine: 1 },
      { kind: 'add', text: 'b', oldLine: null, newLine: 2, noNewline: true },
    ])] }));
    const note = within(region).getByTestId('no-newline');
    expect(note.textContent).toBe('No newline at end of file');
    // The note sits under the added line 2, the one without the newline.
    expect(note.closest('tr')!.previousElementSibling!.textContent).toContain('b');
    expect(note.closest('tr')!.previousElementSibling!.textContent).toContain('2');
    expect(region.textContent).toContain('a\u240d');
  });

  it('draws characters that hide or reorder code as \\u{…}, in its lines and its path, and says why (Trojan Source)', () => {
    // Drawn as is, this line reads `if (access != "user") { // admin only`, but compares against a longer string.
    const trojan = 'if (access != "user\u202e \u2066// admin only\u2069 \u2066") {';
    const region = show(file({ path: 'auth\u202etxt.js\nREADME.md', additions: 1, hunks: [hunk([{ kind: 'add', text: trojan, oldLine: null, newLine: 1 }], '@@ -0,0 +1 @@')] }));
    expect(within(region).getByTestId('file-note').textContent).toMatch(/^This change holds characters drawn as nothing or that reorder the text/);
    expect(region.textContent).toContain('if (access != "user\\u{202e} \\u{2066}// admin only\\u{2069} \\u{2066}") {');
    // A line break in the name too: drawn, it was a space, a name other than the file's.
    expect(region.textContent).toContain('auth\\u{202e}txt.js\\u{a}README.md');
    expect(region.textContent).not.toMatch(/[\u202e\u2066\u2069]/);
    cleanup();
    // Plain text gets no note, a tab stays a tab, and a file named after Object's members is shown plain.
    const plain = show(file({ path: 'a.constructor', additions: 1, hunks: [hunk([{ kind: 'add', text: '\tok', oldLine: null, newLine: 1 }], '@@ -0,0 +1 @@')] }));
    expect(within(plain).queryByTestId('file-note')).toBeNull();
    expect(plain.textContent).toContain('\tok');
    expect([languageOf('a.constructor'), languageOf('a.__proto__'), languageOf('a.ts')]).toEqual([null, null, 'typescript']);
  });

  it('says an added file is empty, rather than "no change to the content"', () => {
    expect(show(file({ path: 'empty.txt', status: 'added', oldMode: null })).textContent).toContain('An empty file.');
  });

  it('tells a screen reader which lines are added and removed, commentable or not', () => {
    const lines: DiffLine[] = [
      { kind: 'context', text: 'same', oldLine: 1, newLine: 1 },
      { kind: 'del', text: 'old', oldLine: 2, newLine: null },
      { kind: 'add', text: 'new', oldLine: null, newLine: 2 },
    ];
    const f = file({ additions: 1, deletions: 1, hunks: [hunk(lines)] });
    const region = show(f);
    expect(within(region).getAllByRole('button').map((b) => b.getAttribute('aria-label'))).toEqual(['Comment on f.txt line 1', 'Comment on f.txt removed line 2', 'Comment on f.txt added line 2']);
    cleanup();
    const rows = [...show(f, false).querySelectorAll('tr.diff-line')].map((r) => r.textContent);
    expect(rows).toEqual(['11same', '2 removedold', '2 addednew']);
  });

  it('quotes a path for the shell in the command that shows a file too large for the board', () => {
    expect(gitDiffCommand({ base: '0123456789abcdef', head: 'fedcba9876543210' }, "it's big.json")).toBe("git diff 0123456789ab fedcba987654 -- 'it'\\''s big.json'");
    // A name that is not UTF-8, as the API shows it (git's quoting): bash's $'…' reads the same escapes.
    expect(gitDiffCommand({ base: '0123456789abcdef', head: 'fedcba9876543210' }, '"n\\377\'s.txt"')).toBe("git diff 0123456789ab fedcba987654 -- $'n\\377\\'s.txt'");
  });
});
