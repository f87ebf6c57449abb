import { cleanup, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { makeDiff, makeTask } from '../../testData.js';
import ReviewPanel from './ReviewPanel.js';

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('ReviewPanel', () => {
  it('shows the latest review round at the gate, and the earlier rounds folded away', async () => {
    const task = makeTask({ status: 'exec_review', title: 'Three rounds' });
    const diff = makeDiff({ fileCount: 1, linesPerFile: 4 });
    const file = diff.files[0]!.path;
    const verdicts = [
      { reviewer: 'code', verdict: 'reject', summary: 'add a comment', runId: 'r1', round: 1 },
      { reviewer: 'security', verdict: 'approve', summary: 'no findings', runId: 'r1', round: 1 },
      { reviewer: 'code', verdict: 'approve', summary: 'no findings', runId: 'r2', round: 2 },
      { reviewer: 'security', verdict: 'approve', summary: 'no findings', runId: 'r2', round: 2 },
    ];
    const findings = [{ reviewer: 'code', severity: 'medium', file, line: 2, message: 'add a comment here', runId: 'r1', round: 1 }];
    vi.stubGlobal('fetch', async (url: string) => {
      if (url.includes('/checks')) return new Response(JSON.stringify({ checks: [] }));
      if (url.includes('/findings')) return new Response(JSON.stringify({ verdicts, findings }));
      return new Response(JSON.stringify(diff));
    });
    render(<ReviewPanel task={task} versions={[]} />);
    await waitFor(() => expect(screen.getAllByTestId('verdict')).toHaveLength(2));
    expect(screen.getAllByTestId('verdict').map((v) => v.textContent)).toEqual(['Code: approves — no findings', 'Security: approves — no findings']);
    expect(screen.getByText('Review 2, the latest: the one this gate decides on.')).toBeTruthy();
    // No check configured: said as such, not as checks that did not run.
    expect(screen.getByText('No checks are configured (checks in the project’s .maestro/config.json): no lint, type check, build or test ran on this change.')).toBeTruthy();
    // The first round's finding is not pinned on the diff the gate decides on; it is in the folded list.
    await screen.findByTestId('diff-viewer');
    expect(screen.queryByTestId('line-finding')).toBeNull();
    const earlier = screen.getByTestId('earlier-rounds');
    expect(within(earlier).getByText('The earlier review (what the agent was asked to fix)')).toBeTruthy();
    expect(earlier.textContent).toContain(`${file}:2: add a comment here`);
  });

  it("shows the hidden characters of a reviewer's summary and findings, as the CLI does, instead of drawing them", async () => {
    const task = makeTask({ status: 'exec_review', title: 'Hidden' });
    const diff = makeDiff({ fileCount: 1, linesPerFile: 4 });
    const file = diff.files[0]!.path;
    // U+202E reverses what follows it on screen; U+200B is drawn as nothing.
    const verdicts = [{ reviewer: 'code', verdict: 'approve', summary: 'fine\u202e etad', runId: 'r1', round: 1 }];
    const findings = [
      { reviewer: 'code', severity: 'low', file, line: 2, message: 'ok\u200b to merge', runId: 'r1', round: 1 },
      { reviewer: 'code', severity: 'low', file: null, line: null, message: 'all \u202egood', runId: 'r1', round: 1 },
    ];
    vi.stubGlobal('fetch', async (url: string) => {
      if (url.includes('/checks')) return new Response(JSON.stringify({ checks: [] }));
      if (url.includes('/findings')) return new Response(JSON.stringify({ verdicts, findings }));
      return new Response(JSON.stringify(diff));
    });
    render(<ReviewPanel task={task} versions={[]} />);
    await waitFor(() => expect(screen.getAllByTestId('verdict')).toHaveLength(1));
    expect(screen.getByTestId('verdict').textContent).toBe('Code: approves — fine\\u{202e} etad');
    await screen.findByTestId('diff-viewer');
    const shown = document.body.textContent ?? '';
    expect(shown).toContain('ok\\u{200b} to merge');
    expect(shown).toContain('all \\u{202e}good');
    expect(shown).not.toMatch(/[\u200b\u202e]/);
  });
});
