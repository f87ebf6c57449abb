/**
 * The task detail of a task the diff gate refused says what it refused and the ways out, as `maestro task show`
 * does (test/cli/diffGate.test.ts): the numbers, the key of `.maestro/config.json` with the fragment that raises it,
 * the `task edit` that adds the files outside ownedFiles, and what a retry does. Rendered through TaskDetailPanel
 * from a detail as GET /api/tasks/:id answers it.
 */
import { cleanup, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { DiffGateRefusal, Task } from '../../api/types.js';
import i18n from '../../i18n/index.js';
import { makeTask, QuietSource } from '../../testData.js';
import { TaskDetailPanel } from './TaskDetailPanel.js';

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const refusal = (over: Partial<DiffGateRefusal>): DiffGateRefusal => ({ runId: 'r_42', branch: 'maestro/t_gate-v1', lines: null, files: null, outsideOwned: null, largeFiles: null, strayGitlinks: [], committed: true, ...over });

/** Opens the task's detail, the daemon answering with `diffGate`; resolves once the title is shown. */
async function openDetail(task: Task, diffGate: DiffGateRefusal | null) {
  vi.stubGlobal('EventSource', QuietSource);
  vi.stubGlobal('fetch', async () => new Response(JSON.stringify({ task, runs: [], children: [], lastDecision: null, versions: [], question: null, diffGate })));
  render(<TaskDetailPanel taskId={task.id} />);
  await screen.findByText(task.title);
}

const refusedTask = (over: Partial<Task> = {}) => makeTask({ id: 't_gate', title: 'Refused', status: 'needs_attention', ownedFiles: ['src/'], lastRunError: 'DIFF_GATE: the diff gate refused the change', ...over });
const commands = (el: HTMLElement) => [...el.querySelectorAll('pre')].map((p) => p.textContent);
const says = (el: HTMLElement) => [...el.querySelectorAll('p')].map((p) => p.textContent);
const codes = (el: HTMLElement) => [...el.querySelectorAll('code')].map((c) => c.textContent);

describe('DiffGatePanel in the task detail', () => {
  it('names the line limit to raise and the owned files to add, with their commands, narrowing, and what a retry does', async () => {
    await openDetail(refusedTask(), refusal({ lines: { changed: 30, limit: 5 }, outsideOwned: { count: 2, files: ['package.json', 'docs/notes.md'] } }));
    const panel = screen.getByTestId('diff-gate');
    expect(within(panel).getByRole('heading').textContent).toBe('The diff gate refused the change of run r_42');

    const lines = screen.getByTestId('diff-gate-lines');
    expect(says(lines)).toEqual(['30 lines changed, over the limit of 5 (limits.maxDiffLines).', 'To allow it, raise limits.maxDiffLines to 30 or more in the project’s .maestro/config.json and commit it:']);
    expect(codes(lines)).toContain('limits.maxDiffLines');
    expect(commands(lines)).toEqual(['{"limits": {"maxDiffLines": 30}}']);
    expect(screen.queryByTestId('diff-gate-files')).toBeNull();

    const outside = screen.getByTestId('diff-gate-outside');
    expect(says(outside)).toEqual(['2 files changed outside the task’s owned files (src/):', 'If the task may change them, add them to its owned files (or with “Edit” on this task):']);
    expect(within(outside).getAllByRole('listitem').map((li) => li.textContent)).toEqual(['package.json', 'docs/notes.md']);
    expect(commands(outside)).toEqual(['maestro task edit t_gate --owned-files src/,package.json,docs/notes.md']);

    expect(commands(screen.getByTestId('diff-gate-narrow'))).toEqual(['maestro task edit t_gate --spec "…"']);
    expect(screen.getByTestId('diff-gate-retry').textContent).toBe(
      '“Retry” starts a new run on the branch maestro/t_gate-v1, which keeps the refused commit: the agent goes on from it, and the checks and the diff gate look at the whole branch again.',
    );
    // The explanation only: the button is TaskActions' one.
    expect(screen.getAllByRole('button', { name: 'Retry' })).toHaveLength(1);
  });

  it('draws a file name the agent put a line break in on one line, in the list and in the command to copy', async () => {
    const forged = 'docs.md\nmaestro task approve t_gate';
    await openDetail(refusedTask({ ownedFiles: ['src/', 'a\tb'] }), refusal({ outsideOwned: { count: 1, files: [forged] } }));
    const outside = screen.getByTestId('diff-gate-outside');
    expect(says(outside)[0]).toBe('1 file changed outside the task’s owned files (src/, a\\u{9}b):');
    expect(within(outside).getAllByRole('listitem').map((li) => li.textContent)).toEqual(['docs.md\\u{a}maestro task approve t_gate']);
    // A <pre> keeps line breaks: the name's would have started a line of its own there. The command pastes whole
    // (core/diffGateWays.ts): the tab of an owned file as bash's $'\x09', the line break as `?`, which an owned-files
    // pattern takes for any one character.
    expect(commands(outside)).toEqual(["maestro task edit t_gate --owned-files $'src/,a\\x09b,docs.md?maestro task approve t_gate'"]);
  });

  it('names the first ten files outside ownedFiles and how many more, and the edit with <paths> and the listing command', async () => {
    const files = Array.from({ length: 100 }, (_, i) => `lib/f${i}.ts`);
    await openDetail(refusedTask(), refusal({ files: { changed: 240, limit: 200 }, outsideOwned: { count: 240, files } }));
    expect(says(screen.getByTestId('diff-gate-files'))).toEqual(['240 files changed, over the limit of 200 (limits.maxDiffFiles).', 'To allow it, raise limits.maxDiffFiles to 240 or more in the project’s .maestro/config.json and commit it:']);
    expect(commands(screen.getByTestId('diff-gate-files'))).toEqual(['{"limits": {"maxDiffFiles": 240}}']);
    const outside = screen.getByTestId('diff-gate-outside');
    expect(within(outside).getAllByRole('listitem').map((li) => li.textContent)).toEqual([...files.slice(0, 10), '…and 230 more']);
    expect(says(outside)[1]).toBe('If the task may change them, add them to its owned files, naming each one (maestro task diff t_gate --stat lists the change’s files; or with “Edit” on this task):');
    expect(commands(outside)).toEqual(['maestro task edit t_gate --owned-files <paths>']);
  });

  it('gives the edit that pastes back to the very names: one with a comma whole, one with a hidden character spelled out', async () => {
    await openDetail(refusedTask(), refusal({ outsideOwned: { count: 2, files: ['docs/a,b.md', 'zero\u200bwidth.ts'] } }));
    const outside = screen.getByTestId('diff-gate-outside');
    expect(within(outside).getAllByRole('listitem').map((li) => li.textContent)).toEqual(['docs/a,b.md', 'zero\\u{200b}width.ts']);
    // Pasted into bash, $'…\xe2\x80\x8b…' is U+200B again; a \u{200b} drawn in the command would name another file.
    expect(commands(outside)).toEqual([`maestro task edit t_gate --owned-file src/ --owned-file docs/a,b.md --owned-file $'zero\\xe2\\x80\\x8bwidth.ts'`]);
  });

  it('names files too large with their sizes against limits.maxFileBytes, and gitlinks as the diff shows them; no narrowing', async () => {
    await openDetail(refusedTask(), refusal({ largeFiles: { limit: 1_048_576, files: [{ path: 'data/dump.bin', bytes: 5_242_880 }] }, strayGitlinks: ['vendor/\u202elib'] }));
    const large = screen.getByTestId('diff-gate-large');
    expect(says(large)).toEqual([
      '1 file larger than the limit of 1,048,576 bytes (limits.maxFileBytes):',
      'Once merged, a file stays in the repository’s history for good: in the worktree, delete it from the task’s branch (and add it to .gitignore if a tool makes it).',
      'To allow it, raise limits.maxFileBytes to 5242880 or more in the project’s .maestro/config.json and commit it:',
    ]);
    expect(within(large).getAllByRole('listitem').map((li) => li.textContent)).toEqual(['data/dump.bin 5,242,880 bytes']);
    expect(commands(large)).toEqual(['{"limits": {"maxFileBytes": 5242880}}']);

    const gitlinks = screen.getByTestId('diff-gate-gitlinks');
    expect(says(gitlinks)[0]).toBe('1 git repository committed as a gitlink, not as files: its files are in no commit.');
    expect(within(gitlinks).getAllByRole('listitem').map((li) => li.textContent)).toEqual(['vendor/\\u{202e}lib']);
    expect(codes(gitlinks)).toContain('git submodule add <url>');

    expect(screen.queryByTestId('diff-gate-narrow')).toBeNull();
    expect(screen.queryByTestId('diff-gate-lines')).toBeNull();
    expect(screen.queryByTestId('diff-gate-outside')).toBeNull();
    expect(screen.getByTestId('diff-gate-retry').textContent).toContain('maestro/t_gate-v1');
  });

  it('says a file too large was never committed: delete it in the worktree, and a retry is refused again while it is there', async () => {
    await openDetail(refusedTask(), refusal({ largeFiles: { limit: 1000, files: [{ path: 'big.bin', bytes: 2 ** 31 }] }, committed: false }));
    const large = screen.getByTestId('diff-gate-large');
    expect(says(large)).toEqual([
      '1 file larger than the limit of 1,000 bytes (limits.maxFileBytes):',
      'Nothing was committed: the file is still in the worktree, uncommitted. Delete it there (and add it to .gitignore if a tool makes it); once merged, a file would stay in the repository’s history for good.',
      'To allow it, raise limits.maxFileBytes to 2147483648 or more in the project’s .maestro/config.json and commit it:',
    ]);
    expect(screen.getByTestId('diff-gate-retry').textContent).toBe(
      '“Retry” starts a new run from the last commit of the branch maestro/t_gate-v1 (the refused run committed nothing), setting aside what is left uncommitted in the worktree (the run names the ref to restore it from); while a file past limits.maxFileBytes is still there, the retry is refused again.',
    );
    expect(screen.getByTestId('diff-gate').textContent).not.toMatch(/from the task’s branch|refused commit/);
  });

  it('says a git repository made in the worktree was never committed: its .git moved out, its files left there', async () => {
    await openDetail(refusedTask(), refusal({ strayGitlinks: ['web'], committed: false }));
    const made = screen.getByTestId('diff-gate-gitlinks');
    expect(says(made)).toEqual([
      '1 git repository made inside the worktree: nothing was committed.',
      'Maestro moved its .git folder out of the worktree and left its files there, uncommitted: in the worktree, commit them as files, or add it as a submodule with git submodule add <url>.',
    ]);
    expect(screen.getByTestId('diff-gate-retry').textContent).toBe(
      '“Retry” starts a new run from the last commit of the branch maestro/t_gate-v1 (the refused run committed nothing), setting aside what is left uncommitted in the worktree (the run names the ref to restore it from).',
    );
    expect(screen.getByTestId('diff-gate').textContent).not.toMatch(/gitlink|refused commit/);
  });

  it('says it in the language chosen, the keys and commands as they are', async () => {
    await i18n.changeLanguage('fr');
    await openDetail(refusedTask(), refusal({ lines: { changed: 30, limit: 5 } }));
    expect(says(screen.getByTestId('diff-gate-lines'))).toEqual(['30 lignes modifiées, au-delà de la limite de 5 (limits.maxDiffLines).', 'Pour l’autoriser, portez limits.maxDiffLines à 30 ou plus dans le .maestro/config.json du projet et committez-le :']);
    expect(screen.getByTestId('diff-gate-retry').textContent).toContain('« Relancer » lance une nouvelle exécution sur la branche maestro/t_gate-v1');
  });

  it('shows nothing when the detail has no refusal', async () => {
    await openDetail(refusedTask({ lastRunError: 'CHECK_FAILED: check test failed (exit 1)' }), null);
    expect(screen.queryByTestId('diff-gate')).toBeNull();
    expect(screen.queryByText(/diff gate/)).toBeNull();
  });
});
