import { act, cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { DiffFile, DiffResponse, Finding } from '../../api/types.js';
import { useReview } from '../../stores/review.js';
import { makeDiff } from '../../testData.js';
import { DiffViewer } from './DiffViewer.js';

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});
beforeEach(() => useReview.setState({ comments: {} }));

const deleted: DiffFile = {
  path: 'src/old.js', oldPath: null, status: 'deleted', oldMode: '100644', newMode: null, binary: false, additions: 0, deletions: 2, collapsed: false, link: null,
  hunks: [{ header: '@@ -1,2 +0,0 @@', oldStart: 1, oldLines: 2, newStart: 0, newLines: 0, lines: [
    { kind: 'del', text: 'const gone = 1;', oldLine: 1, newLine: null },
    { kind: 'del', text: 'const gone2 = 2;', oldLine: 2, newLine: null },
  ] }],
};
const binary: DiffFile = { path: 'img/logo.png', oldPath: null, status: 'added', oldMode: null, newMode: '100644', binary: true, additions: 0, deletions: 0, collapsed: false, hunks: [], link: null };
const big: DiffFile = { path: 'data/big.json', oldPath: null, status: 'added', oldMode: null, newMode: '100644', binary: false, additions: 4000, deletions: 0, collapsed: true, hunks: [], link: null };

function diffWith(...extra: DiffFile[]): DiffResponse {
  const d = makeDiff({ fileCount: 2, linesPerFile: 4 });
  return { ...d, files: [...d.files, ...extra], totals: { files: d.files.length + extra.length, additions: 99, deletions: 2 } };
}

describe('DiffViewer', () => {
  it('lists the files in a tree and draws each diff, highlighted, in unified or split view', async () => {
    const diff = diffWith(deleted, binary);
    const { container } = render(<DiffViewer taskId="t_1" findings={[]} initial={diff} />);
    const tree = screen.getByRole('navigation', { name: 'Changed files' });
    expect(within(tree).getAllByRole('button').map((b) => b.textContent)).toEqual(['file0.ts', 'file1.ts', 'old.js', 'logo.png']);
    expect(within(tree).getByText('src/')).toBeTruthy();
    expect(screen.getByTestId('diff-totals').textContent).toBe('4 files changed +99 −2');
    const file0 = screen.getByRole('region', { name: 'src/dir0/file0.ts' });
    expect(within(file0).getByText('@@ -1,2 +1,4 @@')).toBeTruthy();
    // Prism's tokens: `export` and `const` are keywords, the number a number.
    // (a frame after the lines are drawn)
    await waitFor(() => expect(file0.querySelectorAll('.token.keyword').length).toBeGreaterThan(0));
    expect(file0.textContent).toContain('export const v0_0 = 0;');
    expect(screen.getByText('Binary file: not shown.')).toBeTruthy();
    // Unified: one code cell per line; split: old and new side by side.
    const codeCells = () => file0.querySelector('tr.diff-line')!.querySelectorAll('td.diff-code').length;
    expect(codeCells()).toBe(1);
    fireEvent.click(screen.getByRole('button', { name: 'Split' }));
    await waitFor(() => expect(codeCells()).toBe(2));
    expect(localStorage.getItem('maestro.diffView')).toBe('split');
    expect(container.querySelectorAll('script').length).toBe(0);
  });

  it('pins the findings to their lines and lists the others above the file', () => {
    const findings: Finding[] = [
      { reviewer: 'code', severity: 'high', file: 'src/dir0/file0.ts', line: 3, message: 'v0_2 is never read', runId: 'r1', round: 1 },
      { reviewer: 'security', severity: 'low', file: 'src/dir0/file0.ts', line: 400, message: 'far away', runId: 'r2', round: 1 },
    ];
    render(<DiffViewer taskId="t_1" findings={findings} initial={diffWith()} />);
    const pinned = screen.getByTestId('line-finding');
    expect(pinned.textContent).toBe('high Code reviewer: v0_2 is never read');
    // The widget row sits right under new line 3.
    const row = pinned.closest('tr')!;
    expect(row.previousElementSibling!.textContent).toContain('export const v0_2 = 2;');
    expect(screen.getByTestId('file-finding').textContent).toBe('low line 400 · far away');
  });

  it('lists above the files a finding on a file the change does not touch, which no file could show', () => {
    const findings: Finding[] = [
      { reviewer: 'code', severity: 'high', file: 'src/dir0/file0.ts', line: 3, message: 'v0_2 is never read', runId: 'r1', round: 1 },
      { reviewer: 'security', severity: 'high', file: 'src/auth/session.ts', line: 12, message: 'this check is now skipped by the change', runId: 'r2', round: 1 },
      { reviewer: 'code', severity: 'low', file: 'docs/a\nb.md', line: null, message: 'say it in the docs', runId: 'r1', round: 1 },
    ];
    render(<DiffViewer taskId="t_1" findings={findings} initial={diffWith()} />);
    const elsewhere = screen.getByTestId('findings-elsewhere');
    expect([...elsewhere.querySelectorAll('p')].map((p) => p.textContent)).toEqual([
      'Findings on files this change does not touch:',
      'high Security reviewer, src/auth/session.ts:12: this check is now skipped by the change',
      'low Code reviewer, docs/a\\u{a}b.md: say it in the docs',
    ]);
    // The one on a file of the change stays under its line, not in the list.
    expect(screen.getByTestId('line-finding').textContent).toBe('high Code reviewer: v0_2 is never read');
  });

  it('lists no findings elsewhere when every finding is on a file of the change', () => {
    render(<DiffViewer taskId="t_1" findings={[{ reviewer: 'code', severity: 'low', file: 'src/dir1/file1.ts', line: 1, message: 'ok', runId: 'r1', round: 1 }]} initial={diffWith()} />);
    expect(screen.queryByTestId('findings-elsewhere')).toBeNull();
  });

  it('comments on an added line and on a deleted one, and removes a comment', () => {
    render(<DiffViewer taskId="t_1" findings={[]} initial={diffWith(deleted)} />);
    fireEvent.click(screen.getByRole('button', { name: 'Comment on src/dir0/file0.ts added line 3' }));
    fireEvent.change(screen.getByLabelText('Your comment on src/dir0/file0.ts, line 3'), { target: { value: '  rename v0_2  ' } });
    fireEvent.click(screen.getByRole('button', { name: 'Add the comment' }));
    fireEvent.click(screen.getByRole('button', { name: 'Comment on src/old.js removed line 2' }));
    const box = screen.getByLabelText('Your comment on src/old.js, removed line 2');
    fireEvent.change(box, { target: { value: 'keep this one' } });
    fireEvent.keyDown(box, { key: 'Enter', ctrlKey: true });
    expect(useReview.getState().comments.t_1).toEqual([
      { file: 'src/dir0/file0.ts', line: 3, side: 'new', text: 'rename v0_2' },
      { file: 'src/old.js', line: 2, side: 'old', text: 'keep this one' },
    ]);
    expect(screen.getAllByTestId('line-comment').map((c) => c.firstChild!.textContent)).toEqual(['rename v0_2', 'keep this one']);
    // The tree marks files with comments.
    expect(within(screen.getByRole('navigation', { name: 'Changed files' })).getAllByText('(1)').length).toBe(2);
    fireEvent.click(screen.getByRole('button', { name: 'Remove the comment on src/dir0/file0.ts line 3' }));
    expect(useReview.getState().comments.t_1).toEqual([{ file: 'src/old.js', line: 2, side: 'old', text: 'keep this one' }]);
  });

  it('an older version is read-only: no comment buttons', () => {
    render(<DiffViewer taskId="t_1" readOnly findings={[]} initial={diffWith()} />);
    expect(screen.queryByRole('button', { name: /^Comment on/ })).toBeNull();
  });

  it('loads a collapsed file whole on request, and says so when it is too large even then', async () => {
    const calls: string[] = [];
    const whole: DiffFile = { ...big, collapsed: false, additions: 2, hunks: [{ header: '@@ -0,0 +1,2 @@', oldStart: 0, oldLines: 0, newStart: 1, newLines: 2, lines: [
      { kind: 'add', text: '{"a": 1,', oldLine: null, newLine: 1 }, { kind: 'add', text: '"b": 2}', oldLine: null, newLine: 2 },
    ] }] };
    let answer = whole;
    vi.stubGlobal('fetch', async (url: string) => {
      calls.push(url);
      return new Response(JSON.stringify({ ...diffWith(), files: [answer] }));
    });
    render(<DiffViewer taskId="t_1" findings={[]} initial={diffWith(big, { ...big, path: 'data/huge.bin.json' })} />);
    expect(screen.getAllByText('A large change (4000 lines) is collapsed.').length).toBe(2);
    fireEvent.click(screen.getByRole('button', { name: 'Load the diff of data/big.json' }));
    const file = screen.getByRole('region', { name: 'data/big.json' });
    await waitFor(() => expect(file.textContent).toContain('"b": 2}'));
    expect(calls).toEqual(['/api/tasks/t_1/diff?file=data%2Fbig.json']);
    answer = { ...big, path: 'data/huge.bin.json' };
    fireEvent.click(screen.getByRole('button', { name: 'Load the diff of data/huge.bin.json' }));
    // It says how to see the rest: the command, with the change's commits and the file.
    const d = diffWith();
    await screen.findByText(`Too large to show here; read it with git: git diff ${d.base.slice(0, 12)} ${d.head.slice(0, 12)} -- data/huge.bin.json`);
  });

  it('moves between files with j / k and n / p, but not while typing', () => {
    render(<DiffViewer taskId="t_1" findings={[]} initial={diffWith(deleted)} />);
    const current = () => screen.getByRole('navigation', { name: 'Changed files' }).querySelector('[aria-current="true"]')!.textContent;
    expect(current()).toBe('file0.ts');
    fireEvent.keyDown(document.body, { key: 'j' });
    expect(current()).toBe('file1.ts');
    fireEvent.keyDown(document.body, { key: 'n' });
    fireEvent.keyDown(document.body, { key: 'n' });
    expect(current()).toBe('old.js');
    fireEvent.keyDown(document.body, { key: 'k' });
    expect(current()).toBe('file1.ts');
    fireEvent.keyDown(document.body, { key: 'j', ctrlKey: true });
    expect(current()).toBe('file1.ts');
    fireEvent.click(screen.getByRole('button', { name: 'Comment on src/dir0/file0.ts added line 1' }));
    const box = screen.getByLabelText('Your comment on src/dir0/file0.ts, line 1');
    fireEvent.keyDown(box, { key: 'p' });
    expect(current()).toBe('file1.ts');
    fireEvent.keyDown(document.body, { key: 'p' });
    expect(current()).toBe('file0.ts');
  });

  it('draws the first files at once and the others when they near the screen', () => {
    const observers: { cb: (e: { isIntersecting: boolean }[]) => void; el: Element | null }[] = [];
    vi.stubGlobal('IntersectionObserver', class {
      constructor(private cb: (e: { isIntersecting: boolean }[]) => void) {}
      observe(el: Element) {
        observers.push({ cb: this.cb, el });
      }
      disconnect() {}
    });
    render(<DiffViewer taskId="t_1" findings={[]} initial={makeDiff({ fileCount: 6, linesPerFile: 4 })} />);
    const drawn = () => [...document.querySelectorAll('[data-file-index]')].map((s) => s.querySelectorAll('tr.diff-line').length);
    expect(drawn()).toEqual([4, 4, 0, 0, 0, 0]);
    const fifth = observers.find((o) => o.el?.getAttribute('data-file-index') === '4')!;
    act(() => fifth.cb([{ isIntersecting: true }]));
    expect(drawn()).toEqual([4, 4, 0, 0, 4, 0]);
  });

  it('fetches the diff again when the task moves on (a conflict run at merge time changed the branch)', async () => {
    const before = diffWith();
    const after = { ...before, files: [{ ...deleted, path: 'src/resolved.js' }], totals: { files: 1, additions: 0, deletions: 2 } };
    let answer: DiffResponse = before;
    vi.stubGlobal('fetch', async () => new Response(JSON.stringify(answer)));
    const { rerender } = render(<DiffViewer taskId="t_1" findings={[]} refreshKey="merging" />);
    await screen.findByRole('region', { name: 'src/dir0/file0.ts' });
    answer = after;
    rerender(<DiffViewer taskId="t_1" findings={[]} refreshKey="done" />);
    await screen.findByRole('region', { name: 'src/resolved.js' });
    expect(screen.queryByRole('region', { name: 'src/dir0/file0.ts' })).toBeNull();
  });

  it("fetches the diff and shows the server's refusal", async () => {
    vi.stubGlobal('fetch', async () => new Response(JSON.stringify({ error: { code: 'NO_DIFF', message: 'Task t_9 has no branch yet: it never executed.' } }), { status: 409 }));
    render(<DiffViewer taskId="t_9" findings={[]} />);
    expect((await screen.findByRole('alert')).textContent).toBe('The diff could not be loaded: Task t_9 has no branch yet: it never executed.');
    await act(async () => {});
  });
});
