import { act, fireEvent, render, screen, waitFor, cleanup } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import i18n from '../../i18n/index.js';
import { useReview } from '../../stores/review.js';
import { makeDiff, makeTask } from '../../testData.js';
import { DiffViewer } from '../review/DiffViewer.js';
import { GateActions } from './GateActions.js';

// Unmount first: a component still mounted would run its effects against the real globals.
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

function stubFetch(status = 200, body: unknown = { task: {} }) {
  const calls: { url: string; method: string; body: unknown }[] = [];
  vi.stubGlobal('fetch', async (url: string, init: RequestInit) => {
    calls.push({ url, method: String(init.method), body: init.body ? JSON.parse(String(init.body)) : undefined });
    return new Response(JSON.stringify(body), { status });
  });
  return calls;
}

describe('GateActions', () => {
  it('shows nothing to decide outside a gate', () => {
    render(<GateActions task={makeTask({ status: 'executing' })} baseBranch="main" onDone={() => {}} />);
    expect(screen.queryByRole('button', { name: /^Approve/ })).toBeNull();
  });

  it("lists a conflict run's resolution approved again as that, not as a second identical approval of the change", () => {
    const approval = { taskId: 't_1', gate: 'exec_review' as const, decision: 'approve' as const, reason: 'approved without a person', who: 'auto-approve' };
    const approvals = [{ ...approval, id: 'a1', at: 1, conflictResolution: false }, { ...approval, id: 'a2', at: 2, conflictResolution: true }];
    render(<GateActions task={makeTask({ status: 'done', approvals })} baseBranch="main" onDone={() => {}} />);
    const items = [...screen.getByRole('region', { name: 'Approvals' }).querySelectorAll('li')].map((li) => li.textContent);
    expect(items).toEqual(['execution review: approved — auto-approve: approved without a person', 'execution review: approved (the conflict resolution) — auto-approve: approved without a person']);
  });

  it('says before an approval when it could not merge yet (the checkout is not clean), and only at exec_review', () => {
    const reason = 'the main checkout /r has uncommitted changes (notes.txt); commit or stash them before merging';
    render(<GateActions task={makeTask({ status: 'exec_review' })} baseBranch="main" mergeBlocked={reason} onDone={() => {}} />);
    expect(screen.getByTestId('merge-blocked').textContent).toBe(`An approval will not merge yet: ${reason}. It waits, needing attention, until you fix that and retry.`);
    expect(screen.getByRole('button', { name: 'Approve execution review of version 1' })).toBeTruthy();
    cleanup();
    render(<GateActions task={makeTask({ status: 'plan_review' })} baseBranch="main" mergeBlocked={reason} onDone={() => {}} />);
    expect(screen.queryByTestId('merge-blocked')).toBeNull();
  });

  it('says before an approval that the change edits files steering later runs, only at exec_review', () => {
    const files = ['.maestro/hooks/before-merge.sh', '.workflow/specs/coding.md'];
    render(<GateActions task={makeTask({ status: 'exec_review' })} baseBranch="main" steeringFiles={files} onDone={() => {}} />);
    expect(screen.getByTestId('steering-files').textContent).toBe(
      'This change edits files that steer later runs: .maestro/hooks/before-merge.sh, .workflow/specs/coding.md. Hooks and checks run as code; specs and knowhow go into every later agent’s prompt without the knowledge review.',
    );
    cleanup();
    // A name holding a right-to-left override is shown as the diff shows it, not reordered.
    render(<GateActions task={makeTask({ status: 'exec_review' })} baseBranch="main" steeringFiles={['.maestro/hooks/hs.\u202ebefore-merge']} onDone={() => {}} />);
    expect(screen.getByTestId('steering-files').textContent).toContain(': .maestro/hooks/hs.\\u{202e}before-merge. ');
    cleanup();
    render(<GateActions task={makeTask({ status: 'exec_review' })} baseBranch="main" steeringFiles={[]} onDone={() => {}} />);
    expect(screen.queryByTestId('steering-files')).toBeNull();
  });

  it('says beside the steering files that the change edits files running code outside Maestro once merged, names shown as the diff shows them, only at exec_review', () => {
    // A right-to-left override in a name would show `ci.yml` for a file named otherwise; a line break, a space.
    const files = ['.github/workflows/ci.yml', 'package.json', '.husky/pre-\u202ecommit', 'ci\n.yml'];
    render(<GateActions task={makeTask({ status: 'exec_review' })} baseBranch="main" steeringFiles={['.maestro/hooks/before-merge.sh']} runsElsewhere={files} onDone={() => {}} />);
    const said = screen.getByTestId('runs-elsewhere');
    expect(said.textContent).toBe(
      'This change edits files that run code outside Maestro once merged: .github/workflows/ci.yml, package.json, .husky/pre-\\u{202e}commit, ci\\u{a}.yml. CI runs its workflows on the next push; git hooks, dev containers, editor settings and tasks, and direnv or mise on entering the folder run on the machines of whoever checks it out; package scripts run on install and test.',
    );
    expect(said.getAttribute('role')).toBe('status');
    expect(screen.getByTestId('steering-files').nextElementSibling).toBe(said);
    // Information only: Approve is there as before.
    expect(screen.getByRole('button', { name: 'Approve execution review of version 1' })).toBeTruthy();
    cleanup();
    render(<GateActions task={makeTask({ status: 'exec_review' })} baseBranch="main" runsElsewhere={[]} onDone={() => {}} />);
    expect(screen.queryByTestId('runs-elsewhere')).toBeNull();
    cleanup();
    render(<GateActions task={makeTask({ status: 'plan_review' })} baseBranch="main" runsElsewhere={files} onDone={() => {}} />);
    expect(screen.queryByTestId('runs-elsewhere')).toBeNull();
  });

  it('approves the gate the task waits at; a click at plan or spec review asks nothing (nothing merges there)', async () => {
    for (const gate of ['spec_review', 'plan_review'] as const) {
      const calls = stubFetch();
      const onDone = vi.fn();
      const task = makeTask({ status: gate });
      render(<GateActions task={task} baseBranch="main" onDone={onDone} />);
      fireEvent.click(screen.getByRole('button', { name: `Approve ${gate === 'plan_review' ? 'plan' : 'spec'} review of version 1` }));
      expect(screen.queryByRole('alertdialog')).toBeNull();
      await waitFor(() => expect(onDone).toHaveBeenCalled());
      expect(calls).toEqual([{ url: `/api/tasks/${task.id}/approve`, method: 'POST', body: { gate, who: 'web' } }]);
      cleanup();
    }
  });

  it('asks before a click on Approve at exec_review merges, naming the version, title, commit, branch and size, and the base branch it merges into', async () => {
    const calls = stubFetch();
    const onDone = vi.fn();
    const task = makeTask({ status: 'exec_review', version: 2, title: 'Add the command line' });
    const seen = '9a'.repeat(20);
    useReview.getState().setShown(task.id, seen, { branch: 'maestro/t_9-v2', files: 3, additions: 12, deletions: 4 });
    render(<GateActions task={task} baseBranch="develop" onDone={onDone} />);
    const approve = screen.getByRole('button', { name: 'Approve execution review of version 2' });
    fireEvent.click(approve);
    const dialog = screen.getByRole('alertdialog', { name: 'Approve execution review of version 2?' });
    expect(screen.getByTestId('confirm-merge').textContent).toBe(
      `This merges version 2 of “Add the command line” into develop, the project’s base branch: commit ${seen.slice(0, 12)} of maestro/t_9-v2, 3 files changed (+12 −4).`,
    );
    expect(dialog.getAttribute('aria-describedby')).toBe('gate-confirm-merge');
    expect(calls).toEqual([]);
    // "Don't merge yet" closes it and sends nothing; asked again, the yes merges.
    fireEvent.click(screen.getByRole('button', { name: 'Don’t merge yet' }));
    expect(screen.queryByRole('alertdialog')).toBeNull();
    expect(calls).toEqual([]);
    fireEvent.click(approve);
    expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Yes, approve and merge' }));
    fireEvent.click(screen.getByRole('button', { name: 'Yes, approve and merge' }));
    await waitFor(() => expect(onDone).toHaveBeenCalled());
    expect(calls).toEqual([{ url: `/api/tasks/${task.id}/approve`, method: 'POST', body: { gate: 'exec_review', commit: seen, who: 'web' } }]);
  });

  it('says how far the base branch moved, and in the merge confirmation what the merge then does for the strategy', () => {
    const task = makeTask({ status: 'exec_review', title: 'Ship it' });
    const seen = '7e'.repeat(20);
    useReview.getState().setShown(task.id, seen, { branch: 'maestro/t_7-v1', files: 1, additions: 1, deletions: 0 });
    const counted = (commits: number, mergeStrategy: 'merge' | 'ff-only' | 'no-ff' | null = 'merge', checks = 0) => ({ state: 'counted' as const, base: 'main', branch: 'maestro/t_7-v1', commits, mergeStrategy, checks });
    const confirm = () => {
      fireEvent.click(screen.getByRole('button', { name: 'Approve execution review of version 1' }));
      return screen.getByTestId('confirm-merge').textContent!;
    };

    render(<GateActions task={task} baseBranch="main" baseMoved={counted(0)} onDone={() => {}} />);
    expect(screen.getByTestId('base-moved').textContent).toBe('The base branch main has no new commit since this branch was cut: up to date.');
    expect(confirm()).not.toContain('moved');
    cleanup();

    render(<GateActions task={task} baseBranch="main" baseMoved={counted(1)} onDone={() => {}} />);
    expect(screen.getByTestId('base-moved').textContent).toBe('The base branch main has 1 new commit since this branch was cut.');
    expect(confirm()).toContain('main moved since this branch was cut: git merges the branch onto main as it is now (the project has no checks to run on the result).');
    cleanup();

    // With checks, the merge queue: they run on the merged tree first, and only a result they pass lands.
    render(<GateActions task={task} baseBranch="main" baseMoved={counted(1, 'no-ff', 2)} onDone={() => {}} />);
    expect(confirm()).toContain('main moved since this branch was cut: the project’s checks first run on the branch merged with main as it is now, and only that checked result lands. If they fail, nothing lands and the task needs attention.');
    cleanup();

    render(<GateActions task={task} baseBranch="main" baseMoved={counted(3, 'ff-only')} onDone={() => {}} />);
    expect(screen.getByTestId('base-moved').textContent).toBe('The base branch main has 3 new commits since this branch was cut.');
    expect(confirm()).toContain('main moved since this branch was cut, and the project merges fast-forward only: nothing is merged now. A conflict run brings main into the branch, runs the checks and the reviews');
    cleanup();

    render(<GateActions task={task} baseBranch="main" baseMoved={{ state: 'missing', base: 'main', branch: 'maestro/t_7-v1', missing: 'branch' }} onDone={() => {}} />);
    expect(screen.getByTestId('base-moved').textContent).toBe('The task’s branch maestro/t_7-v1 is not in the repository: the commits main gained since it was cut cannot be counted.');
    cleanup();

    // Only at exec_review.
    render(<GateActions task={makeTask({ status: 'plan_review' })} baseBranch="main" baseMoved={counted(2)} onDone={() => {}} />);
    expect(screen.queryByTestId('base-moved')).toBeNull();
  });

  it("names what the confirmation's second button does: it closes it without deciding", () => {
    const calls = stubFetch();
    render(<GateActions task={makeTask({ status: 'plan_review' })} baseBranch="main" onDone={() => {}} />);
    fireEvent.change(screen.getByLabelText('Reason (required to reject)'), { target: { value: 'no' } });
    fireEvent.keyDown(document, { key: 'r' });
    fireEvent.click(screen.getByRole('button', { name: 'Don’t reject yet' }));
    expect(screen.queryByRole('alertdialog')).toBeNull();
    fireEvent.keyDown(document, { key: 'a' });
    expect(screen.getByRole('button', { name: 'Don’t approve yet' })).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Cancel' })).toBeNull();
    expect(calls).toEqual([]);
  });

  it('says in the merge confirmation, in the language shown, what merges and that it would wait', async () => {
    const task = makeTask({ status: 'exec_review', title: 'Écrire le README' });
    const seen = '3c'.repeat(20);
    useReview.getState().setShown(task.id, seen, { branch: 'maestro/t_3-v1', files: 1, additions: 2, deletions: 0 });
    await i18n.changeLanguage('fr');
    try {
      render(<GateActions task={task} baseBranch="trunk" mergeBlocked="x" onDone={() => {}} />);
      fireEvent.click(screen.getByRole('button', { name: /^Approuver .* de la version 1$/ }));
      expect(screen.getByTestId('confirm-merge').textContent).toContain(`Ceci fusionne la version 1 de « Écrire le README » dans trunk, la branche de base du projet : le commit ${seen.slice(0, 12)} de maestro/t_3-v1, 1 fichier modifié (+2 −0). Une approbation ne fusionnera pas encore : x.`);
      expect(screen.getByRole('button', { name: 'Oui, approuver et fusionner' })).toBeTruthy();
    } finally {
      await i18n.changeLanguage('en');
    }
  });

  it('names the base branch in the merge confirmation in every language, with or without the change loaded', async () => {
    const task = makeTask({ status: 'exec_review', title: 'Ship it' });
    const seen = '5d'.repeat(20);
    try {
      for (const lang of ['en', 'zh', 'es', 'ja', 'fr']) {
        await i18n.changeLanguage(lang);
        for (const change of [{ branch: 'maestro/t_5-v1', files: 2, additions: 1, deletions: 1 }, undefined]) {
          useReview.getState().setShown(task.id, seen, change);
          render(<GateActions task={task} baseBranch="release/2.x" onDone={() => {}} />);
          fireEvent.click(screen.getByRole('button', { name: i18n.t('gate.approveNamed', { gate: i18n.t('status.exec_review'), version: 1 }) }));
          const text = screen.getByTestId('confirm-merge').textContent!;
          expect(text, `${lang} ${change ? 'with' : 'without'} the change`).toContain('release/2.x');
          expect(text).toContain(seen.slice(0, 12));
          cleanup();
        }
      }
    } finally {
      await i18n.changeLanguage('en');
    }
  });

  it('refuses to reject without a reason, then sends the reason', async () => {
    const calls = stubFetch();
    const task = makeTask({ status: 'exec_review' });
    render(<GateActions task={task} baseBranch="main" onDone={() => {}} />);
    fireEvent.click(screen.getByRole('button', { name: 'Reject execution review of version 1' }));
    expect(screen.getByRole('alert').textContent).toBe('A rejection needs a reason.');
    expect(calls).toEqual([]);
    fireEvent.change(screen.getByLabelText('Reason (required to reject)'), { target: { value: '  tests are missing ' } });
    fireEvent.click(screen.getByRole('button', { name: 'Reject execution review of version 1' }));
    await waitFor(() => expect(calls.length).toBe(1));
    expect(calls[0]!.body).toEqual({ gate: 'exec_review', reason: 'tests are missing', who: 'web' });
  });

  it("shows the server's refusal", async () => {
    stubFetch(409, { error: { code: 'ILLEGAL_TRANSITION', message: 'Task t is done; nothing to approve.' } });
    render(<GateActions task={makeTask({ status: 'plan_review' })} baseBranch="main" onDone={() => {}} />);
    fireEvent.click(screen.getByRole('button', { name: 'Approve plan review of version 1' }));
    await waitFor(() => expect(screen.getByRole('alert').textContent).toBe('Task t is done; nothing to approve.'));
  });

  it('sends the line comments with a rejection at exec_review, then forgets them', async () => {
    const task = makeTask({ status: 'exec_review' });
    const calls = stubFetch(200, { task, next: null });
    useReview.setState({ comments: { [task.id]: [{ file: 'src/a.ts', line: 3, side: 'new', text: 'rename it' }, { file: 'src/b.ts', line: 7, side: 'old', text: 'keep this' }] } });
    render(<GateActions task={task} baseBranch="main" onDone={() => {}} />);
    expect(screen.getByTestId('comments-to-send').textContent).toBe('A rejection sends 2 line comments: src/a.ts:3, src/b.ts:7');
    fireEvent.change(screen.getByLabelText('Reason (required to reject)'), { target: { value: 'see the lines' } });
    fireEvent.click(screen.getByRole('button', { name: 'Reject execution review of version 1' }));
    await waitFor(() => expect(calls.length).toBe(1));
    expect(calls[0]!.body).toEqual({
      gate: 'exec_review', reason: 'see the lines', who: 'web',
      comments: [{ file: 'src/a.ts', line: 3, side: 'new', text: 'rename it' }, { file: 'src/b.ts', line: 7, side: 'old', text: 'keep this' }],
    });
    await waitFor(() => expect(useReview.getState().comments[task.id]).toBeUndefined());
  });

  it('approves by keyboard after a confirmation, never while typing in a field', async () => {
    const calls = stubFetch();
    const task = makeTask({ status: 'exec_review' });
    const seen = 'd4'.repeat(20);
    useReview.getState().setShown(task.id, seen);
    render(<GateActions task={task} baseBranch="main" onDone={() => {}} />);
    fireEvent.keyDown(screen.getByLabelText('Reason (required to reject)'), { key: 'a' });
    expect(screen.queryByRole('alertdialog')).toBeNull();
    fireEvent.keyDown(document.body, { key: 'a' });
    const dialog = screen.getByRole('alertdialog');
    expect(dialog.textContent).toContain('Approve execution review of version 1?');
    expect(calls).toEqual([]);
    // Escape cancels; `a` again, then the confirmation sends it.
    fireEvent.keyDown(screen.getByRole('button', { name: 'Yes, approve and merge' }), { key: 'Escape' });
    expect(screen.queryByRole('alertdialog')).toBeNull();
    fireEvent.keyDown(document.body, { key: 'a' });
    expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Yes, approve and merge' }));
    fireEvent.click(screen.getByRole('button', { name: 'Yes, approve and merge' }));
    await waitFor(() => expect(calls.length).toBe(1));
    expect(calls[0]).toEqual({ url: `/api/tasks/${task.id}/approve`, method: 'POST', body: { gate: 'exec_review', commit: seen, who: 'web' } });
  });

  it('approves nothing at exec_review until the diff has loaded: the approval is of the commit shown', async () => {
    const task = makeTask({ status: 'exec_review' });
    const head = 'e5'.repeat(20);
    let answer: ((r: Response) => void) | null = null;
    const posts: unknown[] = [];
    vi.stubGlobal('fetch', (url: string, init: RequestInit) => {
      if (url.endsWith('/diff')) return new Promise<Response>((resolve) => (answer = resolve));
      posts.push(JSON.parse(String(init.body)));
      return Promise.resolve(new Response(JSON.stringify({ task: { ...task, status: 'merging' } })));
    });
    const onDone = vi.fn();
    render(
      <>
        <GateActions task={task} baseBranch="main" onDone={onDone} />
        <DiffViewer taskId={task.id} findings={[]} />
      </>,
    );
    const approve = screen.getByRole('button', { name: 'Approve execution review of version 1' }) as HTMLButtonElement;
    expect(approve.disabled).toBe(true);
    expect(screen.getByTestId('approve-waits').textContent).toBe('An approval waits for the change below to load: it is of the commit shown.');
    fireEvent.keyDown(document.body, { key: 'a' });
    expect(screen.queryByRole('alertdialog')).toBeNull();
    // Rejecting needs no diff.
    expect((screen.getByRole('button', { name: 'Reject execution review of version 1' }) as HTMLButtonElement).disabled).toBe(false);
    await waitFor(() => expect(answer).not.toBeNull());
    answer!(new Response(JSON.stringify(makeDiff({ taskId: task.id, head }))));
    await waitFor(() => expect(approve.disabled).toBe(false));
    expect(screen.queryByTestId('approve-waits')).toBeNull();
    fireEvent.click(approve);
    // The confirmation names the change the diff shows (makeDiff: two files of two added lines each).
    expect(screen.getByTestId('confirm-merge').textContent).toContain(`commit ${head.slice(0, 12)} of maestro/t_1-v1, 2 files changed (+4 −0).`);
    fireEvent.click(screen.getByRole('button', { name: 'Yes, approve and merge' }));
    await waitFor(() => expect(onDone).toHaveBeenCalled());
    expect(posts).toEqual([{ gate: 'exec_review', commit: head, who: 'web' }]);
  });

  it('says so when the diff fetched again shows another commit than before', async () => {
    const task = makeTask({ status: 'exec_review' });
    const [before, after] = ['f6'.repeat(20), '07'.repeat(20)];
    useReview.getState().setShown(task.id, before);
    render(<GateActions task={task} baseBranch="main" onDone={() => {}} />);
    expect(screen.getByTestId('approves-commit').textContent).toBe(`An approval is of commit ${before.slice(0, 12)}, the change shown below.`);
    act(() => useReview.getState().setShown(task.id, after));
    await waitFor(() =>
      expect(screen.getByTestId('approves-commit').textContent).toBe(`The change shown is now commit ${after.slice(0, 12)}, no longer ${before.slice(0, 12)}: look at it again before approving.`),
    );
    expect(screen.getByTestId('approves-commit').getAttribute('role')).toBe('status');
    // Another task's commit is no change of this one's.
    cleanup();
    const other = makeTask({ status: 'exec_review' });
    useReview.getState().setShown(other.id, before);
    render(<GateActions task={other} baseBranch="main" onDone={() => {}} />);
    expect(screen.getByTestId('approves-commit').textContent).toBe(`An approval is of commit ${before.slice(0, 12)}, the change shown below.`);
  });

  it('rejects by keyboard: first the reason, then a confirmation', async () => {
    const task = makeTask({ status: 'exec_review' });
    const calls = stubFetch(200, { task, next: null });
    render(<GateActions task={task} baseBranch="main" onDone={() => {}} />);
    fireEvent.keyDown(document.body, { key: 'r' });
    expect(screen.queryByRole('alertdialog')).toBeNull();
    expect(screen.getByRole('alert').textContent).toBe('A rejection needs a reason.');
    expect(document.activeElement).toBe(screen.getByLabelText('Reason (required to reject)'));
    fireEvent.change(screen.getByLabelText('Reason (required to reject)'), { target: { value: 'no tests' } });
    fireEvent.keyDown(document.body, { key: 'r' });
    expect(screen.getByRole('alertdialog').textContent).toContain('Reject, sending the reason and 0 line comments?');
    expect(calls).toEqual([]);
    fireEvent.click(screen.getByRole('button', { name: 'Yes, reject' }));
    await waitFor(() => expect(calls.length).toBe(1));
    expect(calls[0]!.body).toEqual({ gate: 'exec_review', reason: 'no tests', who: 'web' });
  });

  it('approves at exec_review the commit of the diff shown; refused as stale, says so and fetches the diff again', async () => {
    const task = makeTask({ status: 'exec_review' });
    const [seen, now] = ['a1'.repeat(20), 'b2'.repeat(20)];
    let head = seen;
    const posts: unknown[] = [];
    let diffs = 0;
    const message = `Nothing was approved: you looked at commit ${seen.slice(0, 12)} of task ${task.id}, but the change waiting at exec_review is commit ${now.slice(0, 12)} now. Look at its diff again, then approve what it shows.`;
    vi.stubGlobal('fetch', async (url: string, init: RequestInit) => {
      if (url.endsWith('/diff')) {
        diffs++;
        return new Response(JSON.stringify(makeDiff({ taskId: task.id, head })));
      }
      const body = JSON.parse(String(init.body)) as { commit?: string };
      posts.push(body);
      if (body.commit !== now) return new Response(JSON.stringify({ error: { code: 'STALE_REVIEW', message } }), { status: 409 });
      return new Response(JSON.stringify({ task: { ...task, status: 'merging' } }));
    });
    const onDone = vi.fn();
    render(
      <>
        <GateActions task={task} baseBranch="main" onDone={onDone} />
        <DiffViewer taskId={task.id} findings={[]} />
      </>,
    );
    await waitFor(() => expect(screen.getByTestId('approves-commit').textContent).toBe(`An approval is of commit ${seen.slice(0, 12)}, the change shown below.`));
    // Meanwhile another commit was reviewed: the approval of the one looked at is refused, and said.
    head = now;
    fireEvent.click(screen.getByRole('button', { name: 'Approve execution review of version 1' }));
    fireEvent.click(screen.getByRole('button', { name: 'Yes, approve and merge' }));
    await waitFor(() => expect(screen.getByRole('alert').textContent).toBe(`${message} The change below is loaded again.`));
    expect(posts).toEqual([{ gate: 'exec_review', commit: seen, who: 'web' }]);
    expect(onDone).not.toHaveBeenCalled();
    // The diff is fetched again; the next approval names the commit it shows now.
    await waitFor(() => expect(screen.getByTestId('approves-commit').textContent).toContain(now.slice(0, 12)));
    expect(diffs).toBe(2);
    fireEvent.click(screen.getByRole('button', { name: 'Approve execution review of version 1' }));
    fireEvent.click(screen.getByRole('button', { name: 'Yes, approve and merge' }));
    await waitFor(() => expect(onDone).toHaveBeenCalled());
    expect(posts).toEqual([{ gate: 'exec_review', commit: seen, who: 'web' }, { gate: 'exec_review', commit: now, who: 'web' }]);
  });

  it('an older version\'s diff shown is not what an approval names', async () => {
    const task = makeTask({ status: 'exec_review', version: 2 });
    vi.stubGlobal('fetch', async () => new Response(JSON.stringify(makeDiff({ taskId: task.id, version: 1, head: 'c3'.repeat(20) }))));
    render(<DiffViewer taskId={task.id} version={1} readOnly findings={[]} />);
    await screen.findByTestId('diff-viewer');
    expect(useReview.getState().shown[task.id]).toBeUndefined();
  });
});
