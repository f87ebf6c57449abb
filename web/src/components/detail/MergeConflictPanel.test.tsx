/**
 * The task detail of a task parked by a merge conflict names the ways out, as `maestro task show` does
 * (test/cli/mergeConflict.test.ts): the git commands that resolve it by hand in the task's worktree, a retry naming
 * the commit made (refused until it is a full sha), the task run again from the current main, and cancelling it.
 * Rendered through TaskDetailPanel from a detail as GET /api/tasks/:id answers it; the retries are the requests the
 * daemon validates (src/api/routes/tasks.ts retryBody).
 */
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { MergeConflictParkWire, Task } from '../../api/types.js';
import { makeTask, QuietSource } from '../../testData.js';
import { TaskDetailPanel } from './TaskDetailPanel.js';

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const parked = makeTask({ id: 't_merge', title: 'Parked', status: 'needs_attention', version: 1, lastRunError: 'MERGE_CONFLICT: main and maestro/t_merge-v1 conflict in keep.txt' });
const park = (over: Partial<MergeConflictParkWire> = {}): MergeConflictParkWire => ({ branch: 'maestro/t_merge-v1', baseBranch: 'main', remote: null, worktree: '/home/ada/.maestro/worktrees/p_1/t_merge-v1', midMerge: false, files: ['keep.txt'], conflictRuns: 2, ...over });

/** Opens the detail; the daemon answers `mergeConflict`, and each retry with `answer`. Returns the retry bodies sent. */
async function openDetail(mergeConflict: MergeConflictParkWire | null, answer: Task = parked): Promise<Array<Record<string, unknown>>> {
  const retries: Array<Record<string, unknown>> = [];
  vi.stubGlobal('EventSource', QuietSource);
  vi.stubGlobal('fetch', async (url: string, init?: RequestInit) => {
    if (url.endsWith('/retry')) {
      retries.push(JSON.parse(String(init?.body)) as Record<string, unknown>);
      return new Response(JSON.stringify({ task: answer }));
    }
    return new Response(JSON.stringify({ task: parked, runs: [], children: [], lastDecision: null, versions: [], question: null, diffGate: null, mergeConflict }));
  });
  render(<TaskDetailPanel taskId={parked.id} />);
  await screen.findByText(parked.title);
  return retries;
}

describe('MergeConflictPanel in the task detail', () => {
  it('gives the commands that resolve it by hand in the worktree, and merges the commit named once it is a full sha', async () => {
    const retries = await openDetail(park());
    const panel = screen.getByTestId('merge-conflict');
    expect(within(panel).getByRole('heading').textContent).toBe('main and maestro/t_merge-v1 conflict in keep.txt, and a person must settle it: a plain retry merges again and meets the same conflict. Ways out:');
    const byHand = screen.getByTestId('merge-conflict-by-hand');
    // Two blocks to paste, with no comment in them: up to the conflict, then from the resolved files to the commit.
    expect([...byHand.querySelectorAll('pre')].map((p) => p.textContent?.split('\n'))).toEqual([
      ['cd /home/ada/.maestro/worktrees/p_1/t_merge-v1', 'git merge main'],
      ['git add -- keep.txt', 'git commit --no-edit', 'git rev-parse HEAD'],
    ]);
    expect(byHand.textContent).toContain('Resolve keep.txt (git’s conflict markers), then commit, and give the commit the last line prints:');
    expect(byHand.textContent).toContain('From a terminal: maestro task retry t_merge --commit <sha>');
    // No plain Retry beside it: it would merge again and meet the same conflict. Cancel stays.
    expect(screen.queryByRole('button', { name: 'Retry' })).toBeNull();
    expect(screen.getByRole('button', { name: 'Cancel this task…' })).toBeTruthy();
    const merge = within(byHand).getByRole('button', { name: 'Merge this commit' }) as HTMLButtonElement;
    const input = within(byHand).getByRole('textbox');
    fireEvent.change(input, { target: { value: 'abc123' } });
    expect(merge.disabled).toBe(true);
    const sha = 'a'.repeat(40);
    fireEvent.change(input, { target: { value: ` ${sha} ` } });
    fireEvent.click(merge);
    await waitFor(() => expect(retries).toEqual([{ commit: sha, who: 'web' }]));
  });

  it('runs the task again from the current base branch, named, and links the new version; says the other ways without a worktree', async () => {
    const next = makeTask({ id: 't_merge2', title: 'Parked', status: 'ready', version: 2 });
    const retries = await openDetail(park({ baseBranch: 'trunk', worktree: null, files: ['a.txt', 'b\nc.txt'] }), next);
    const panel = screen.getByTestId('merge-conflict');
    expect(within(panel).getByRole('heading').textContent).toMatch(/^trunk and maestro\/t_merge-v1 conflict in a\.txt, b\\u\{a\}c\.txt,/);
    expect([...screen.getByTestId('merge-conflict-by-hand').querySelectorAll('pre')].map((p) => p.textContent?.split('\n'))).toEqual([
      ['git worktree add ../maestro-resolve-t_merge maestro/t_merge-v1', 'cd ../maestro-resolve-t_merge', 'git merge trunk'],
      [`git add -- a.txt $'b\\x0ac.txt'`, 'git commit --no-edit', 'git rev-parse HEAD'],
    ]);
    const fresh = screen.getByTestId('merge-conflict-fresh');
    expect(fresh.textContent).toContain('Or run the task again from the current trunk: a new version on a new branch');
    expect(fresh.textContent).toContain('From a terminal: maestro task retry t_merge --fresh');
    fireEvent.click(within(fresh).getByRole('button', { name: 'Run again from trunk' }));
    await waitFor(() => expect(retries).toEqual([{ fresh: true, who: 'web' }]));
    const said = await within(panel).findByRole('status');
    expect(said.textContent).toBe('Version 2 runs from the current trunk (ready): t_merge2');
    expect(within(said).getByRole('link').getAttribute('href')).toContain('t_merge2');
  });

  it('is not there for a task needing attention for another reason, which keeps its plain Retry', async () => {
    await openDetail(null);
    expect(screen.queryByTestId('merge-conflict')).toBeNull();
    expect(screen.getByRole('button', { name: 'Retry' })).toBeTruthy();
  });
});
