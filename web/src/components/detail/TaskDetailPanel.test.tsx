import { act, cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { makeDiff, makeTask } from '../../testData.js';
import { LiveOutput } from './LiveOutput.js';
import { TaskDetailPanel } from './TaskDetailPanel.js';
import { useTasks } from '../../stores/tasks.js';
import { useProjects } from '../../stores/projects.js';
import { summarizeTask } from '../../api/types.js';

/** A refetch after a live event: longer than testSetup's default wait, scaled for the load like it. */
const LONG_WAIT = { timeout: Math.round(10_000 * (Number(import.meta.env.MAESTRO_TEST_SLOW) || 1)) };

// Unmount first: a component still mounted would run its effects against the real globals.
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

class FakeSource {
  static last: FakeSource | null = null;
  readyState = 1;
  onopen: (() => void) | null = null;
  onerror: (() => void) | null = null;
  private fns = new Map<string, ((e: MessageEvent) => void)[]>();
  constructor(readonly url: string) {
    FakeSource.last = this;
  }
  addEventListener(k: string, fn: (e: MessageEvent) => void) {
    this.fns.set(k, [...(this.fns.get(k) ?? []), fn]);
  }
  close() {}
  emit(k: string, id: string, data: unknown) {
    for (const fn of this.fns.get(k) ?? []) fn(new MessageEvent(k, { data: JSON.stringify(data), lastEventId: id }));
  }
}

describe('TaskDetailPanel', () => {
  it('says so when the task was deleted', async () => {
    vi.stubGlobal('fetch', async () => new Response(JSON.stringify({ error: { code: 'UNKNOWN_TASK', message: 'No task "t_x".' } }), { status: 404 }));
    render(<TaskDetailPanel taskId="t_x" />);
    expect(await screen.findByText('This task no longer exists')).toBeTruthy();
    expect(screen.getByText('No task "t_x".')).toBeTruthy();
  });

  it('says so when the open task is deleted, and drops its card', async () => {
    vi.stubGlobal('EventSource', FakeSource);
    const task = makeTask({ status: 'executing', title: 'Soon gone' });
    useTasks.setState({ projectId: task.projectId, byId: { [task.id]: task }, touched: {}, gone: {} });
    let exists = true;
    vi.stubGlobal('fetch', async () =>
      exists
        ? new Response(JSON.stringify({ task, runs: [], children: [], lastDecision: null }))
        : new Response(JSON.stringify({ error: { code: 'UNKNOWN_TASK', message: `No task "${task.id}".` } }), { status: 404 }),
    );
    render(<TaskDetailPanel taskId={task.id} />);
    expect(await screen.findByText('Soon gone')).toBeTruthy();
    exists = false;
    // The live feed says something happened to it; the refetch finds it gone.
    act(() => {
      useTasks.getState().applyEvent({ id: 9, projectId: task.projectId, taskId: task.id, runId: null, traceId: null, type: 'task.edited', payload: {}, at: 9 });
    });
    expect(await screen.findByText('This task no longer exists', {}, LONG_WAIT)).toBeTruthy();
    await waitFor(() => {
      expect(useTasks.getState().byId[task.id]).toBeUndefined();
      expect(useTasks.getState().gone[task.id]).toBe(true);
    }, LONG_WAIT);
  });

  it('says when a ready task cannot start: a dependency is cancelled', async () => {
    vi.stubGlobal('EventSource', FakeSource);
    const task = makeTask({ status: 'ready', title: 'Waits' });
    const stuckOn = [{ id: 't_dep', title: 'Schema', status: 'cancelled' }];
    vi.stubGlobal('fetch', async () => new Response(JSON.stringify({ task, runs: [], children: [], lastDecision: null, versions: [], question: null, stuckOn })));
    render(<TaskDetailPanel taskId={task.id} />);
    expect((await screen.findByTestId('stuck-on')).textContent).toBe('It cannot start: it depends on “Schema” (cancelled). Retry that task, or drop it from this one’s dependencies.');
  });

  it('says which dependencies a ready task waits for, and which of them wait for you (its card says only "ready")', async () => {
    vi.stubGlobal('EventSource', FakeSource);
    const task = makeTask({ status: 'ready', title: 'Add variance' });
    const waitingOn = [{ id: 't_a', title: 'Add median', status: 'plan_review' }, { id: 't_b', title: 'Add mean', status: 'executing' }];
    vi.stubGlobal('fetch', async () => new Response(JSON.stringify({ task, runs: [], children: [], lastDecision: null, versions: [], question: null, stuckOn: [], waitingOn })));
    render(<TaskDetailPanel taskId={task.id} />);
    expect((await screen.findByTestId('waiting-on')).textContent).toBe('It starts when its dependencies are done: “Add median” (plan review, waits for you), “Add mean” (executing).');
  });

  it('says when a ready task waits for a place, naming the tasks that hold them', async () => {
    vi.stubGlobal('EventSource', FakeSource);
    const task = makeTask({ status: 'ready', title: 'Next' });
    const waitingForSlot = { limit: 2, held: [{ id: 't_a', title: 'Asks', status: 'awaiting_input' }, { id: 't_b', title: 'At work', status: 'executing' }] };
    vi.stubGlobal('fetch', async () => new Response(JSON.stringify({ task, runs: [], children: [], lastDecision: null, versions: [], question: null, stuckOn: [], waitingForSlot })));
    render(<TaskDetailPanel taskId={task.id} />);
    expect((await screen.findByTestId('waiting-for-slot')).textContent).toBe(
      'It waits for a place: the daemon takes at most 2 tasks of this project at a time, and these hold them: “Asks” (awaiting input), “At work” (executing). A task waiting for your answer keeps its place until you reply.',
    );
  });

  it('says when a claimed task waits for a run slot on the daemon holding it (a review taken over by a busy daemon)', async () => {
    vi.stubGlobal('EventSource', FakeSource);
    const task = makeTask({ status: 'reviewing', title: 'Taken over' });
    const waitingForRun = { daemon: 'build-2', limit: 1, running: [{ taskId: 't_busy', kind: 'execute' }] };
    vi.stubGlobal('fetch', async () => new Response(JSON.stringify({ task, runs: [], children: [], lastDecision: null, versions: [], question: null, waitingForRun })));
    render(<TaskDetailPanel taskId={task.id} />);
    expect((await screen.findByTestId('waiting-for-run')).textContent).toBe(
      'It waits for a run slot on daemon build-2: it runs at most 1 at a time, and has these going: execute t_busy. Its next stage starts there when one of them ends.',
    );
  });

  it('in merging, says the merge check at work: main merged into the branch, then which check runs on it', async () => {
    vi.stubGlobal('EventSource', FakeSource);
    const task = makeTask({ status: 'merging', title: 'Add b' });
    let mergeCheck: Record<string, unknown> = { runId: 'r_mc', daemon: 'build-1', check: null, round: 1, maxRounds: 3, state: 'running' };
    vi.stubGlobal('fetch', async (url: string) => {
      if (url.includes('/checks')) return new Response(JSON.stringify({ checks: [] }));
      if (url.includes('/findings')) return new Response(JSON.stringify({ verdicts: [], findings: [] }));
      if (url.includes('/diff')) return new Response(JSON.stringify(makeDiff({ fileCount: 1 })));
      return new Response(JSON.stringify({ task, runs: [], children: [], lastDecision: null, versions: [], question: null, baseBranch: 'trunk', mergeCheck }));
    });
    const { unmount } = render(<TaskDetailPanel taskId={task.id} />);
    expect((await screen.findByTestId('merge-check')).textContent).toBe(
      'Checking the merge with trunk: trunk is being merged into its branch, then the project’s checks run on it. Nothing lands until they pass. Merge check 1 of at most 3, on daemon build-1.',
    );
    unmount();
    mergeCheck = { ...mergeCheck, check: 'unit tests', round: 2 };
    const { unmount: unmount2 } = render(<TaskDetailPanel taskId={task.id} />);
    expect((await screen.findByTestId('merge-check')).textContent).toBe(
      'Checking the merge with trunk: check unit tests runs on its branch merged with trunk. Nothing lands until the checks pass. Merge check 2 of at most 3, on daemon build-1.',
    );
    unmount2();
    // Its run not started yet: every run slot of the daemon is taken, and it says so, not that it checks.
    mergeCheck = { runId: null, daemon: 'build-1', check: null, round: 1, maxRounds: 3, state: 'waiting' };
    const { unmount: unmount3 } = render(<TaskDetailPanel taskId={task.id} />);
    expect((await screen.findByTestId('merge-check')).textContent).toBe(
      'Merge check waiting for a worker: its merge with trunk must pass the project’s checks before it lands, and every run slot on daemon build-1 is taken. The check starts when one of those runs ends; nothing lands until it passes.',
    );
    unmount3();
    // Its run being started on a free slot: it says so, and no word of waiting for a worker.
    mergeCheck = { ...mergeCheck, state: 'starting' };
    const { unmount: unmount4 } = render(<TaskDetailPanel taskId={task.id} />);
    const starting = (await screen.findByTestId('merge-check')).textContent;
    expect(starting).toBe('Starting its merge check: its merge with trunk must pass the project’s checks before it lands, and daemon build-1 is starting the check’s run on a free run slot. Nothing lands until it passes.');
    expect(starting).not.toMatch(/waiting|taken/);
    unmount4();
    // The daemon that opened it is gone: named, and another daemon takes it over.
    mergeCheck = { ...mergeCheck, state: 'ownerGone' };
    render(<TaskDetailPanel taskId={task.id} />);
    expect((await screen.findByTestId('merge-check')).textContent).toBe(
      'Merge check left behind: its merge with trunk must pass the project’s checks before it lands, and daemon build-1, which opened it, is no longer running (stopped, or no heartbeat), so its run will not start there. Another daemon takes the check over at its next merge pass; nothing lands until it passes.',
    );
  });

  it.each([
    ['finished before ledgers were stored', null, "they finished before runs' candidates were stored in the database"],
    ['whose stored ledger was refused', 'the ledger of run r_exec stored in the database: field candidates must be an array.', 'what that daemon stored in the database could not be imported (the ledger of run r_exec stored in the database: field candidates must be an array.)'],
  ])('at exec_review, says the knowledge candidates of runs on another daemon not imported here (%s) are there, why, and where to review them', async (_what, error, why) => {
    vi.stubGlobal('EventSource', FakeSource);
    const task = makeTask({ status: 'exec_review', title: 'Taken over' });
    const knowledgeElsewhere = [{ daemon: 'build-1', runId: 'r_exec', kind: 'execute', host: null, home: null, error }];
    vi.stubGlobal('fetch', async (url: string) => {
      if (url.includes('/checks')) return new Response(JSON.stringify({ checks: [] }));
      if (url.includes('/findings')) return new Response(JSON.stringify({ verdicts: [], findings: [] }));
      if (url.includes('/diff')) return new Response(JSON.stringify(makeDiff({ fileCount: 1 })));
      if (url.includes('/knowledge/')) return new Response(JSON.stringify({ error: { code: 'UNKNOWN_SESSION', message: 'no session' } }), { status: 404 });
      return new Response(JSON.stringify({ task, runs: [], children: [], lastDecision: null, versions: [], question: null, baseBranch: 'main', knowledgeElsewhere }));
    });
    render(<TaskDetailPanel taskId={task.id} />);
    expect((await screen.findByTestId('knowledge-elsewhere')).textContent).toBe(
      `The knowledge candidates proposed by its runs on daemon build-1 (execute r_exec) are not available here: ${why}, so they are staged only in that daemon's clone of the project, on its host. Review them there: maestro knowledge review ${task.id}.`,
    );
  });

  it('passes the files of the change that run code elsewhere to the gate, beside the steering files', async () => {
    vi.stubGlobal('EventSource', FakeSource);
    const task = makeTask({ status: 'exec_review', title: 'Add CI' });
    vi.stubGlobal('fetch', async (url: string) => {
      if (url.includes('/checks')) return new Response(JSON.stringify({ checks: [] }));
      if (url.includes('/findings')) return new Response(JSON.stringify({ verdicts: [], findings: [] }));
      if (url.includes('/diff')) return new Response(JSON.stringify(makeDiff({ fileCount: 1 })));
      return new Response(JSON.stringify({ task, runs: [], children: [], lastDecision: null, versions: [], question: null, baseBranch: 'main', steeringFiles: ['.maestro/hooks/x.sh'], runsElsewhere: ['.github/workflows/ci.yml'] }));
    });
    render(<TaskDetailPanel taskId={task.id} />);
    expect((await screen.findByTestId('runs-elsewhere')).textContent).toContain('once merged: .github/workflows/ci.yml.');
    expect(screen.getByTestId('steering-files').textContent).toContain('.maestro/hooks/x.sh');
  });

  it('shows the reply box with the agent\'s question when the task awaits input', async () => {
    vi.stubGlobal('EventSource', FakeSource);
    const task = makeTask({ status: 'awaiting_input', title: 'Ask me' });
    const question = { text: 'Which name should it print?', clarifyId: 'q1', askedAt: 1 };
    vi.stubGlobal('fetch', async () => new Response(JSON.stringify({ task, runs: [], children: [], lastDecision: null, versions: [], question })));
    render(<TaskDetailPanel taskId={task.id} />);
    expect(await screen.findByText('The agent asks a question')).toBeTruthy();
    // The question itself, inside the box the answer goes in.
    expect(screen.getByTestId('question').textContent).toBe('Which name should it print?');
    expect(screen.getByRole('button', { name: 'Send the answer' })).toBeTruthy();
    expect(screen.queryByRole('button', { name: /^Approve/ })).toBeNull();
    // Not finished: it can be cancelled from here; it does not need attention: no retry.
    expect(screen.getByRole('button', { name: 'Cancel this task…' })).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Retry' })).toBeNull();
  });
});

describe('TaskDetailPanel at exec_review with an older version picked', () => {
  it('says beside the gate and in the confirmation that the decision is on its own version, not the one shown', async () => {
    vi.stubGlobal('EventSource', FakeSource);
    const task = makeTask({ id: 't_v2', status: 'exec_review', title: 'Second try', version: 2, parentVersionId: 't_v1' });
    const versions = [{ id: 't_v1', version: 1, status: 'superseded' }, { id: 't_v2', version: 2, status: 'exec_review' }];
    const diffUrls: string[] = [];
    vi.stubGlobal('fetch', async (url: string) => {
      if (url.includes('/checks')) return new Response(JSON.stringify({ checks: [] }));
      if (url.includes('/findings')) return new Response(JSON.stringify({ verdicts: [], findings: [] }));
      if (url.includes('/diff')) {
        diffUrls.push(url);
        return new Response(JSON.stringify(makeDiff({ fileCount: 1 })));
      }
      return new Response(JSON.stringify({ task, runs: [], children: [], lastDecision: null, versions, baseBranch: 'main' }));
    });
    render(<TaskDetailPanel taskId={task.id} />);
    // The buttons name what they decide, for a screen reader too.
    expect(await screen.findByRole('button', { name: 'Approve execution review of version 2' })).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Reject execution review of version 2' })).toBeTruthy();
    await screen.findByTestId('diff-viewer', {}, LONG_WAIT);
    expect(screen.queryByTestId('other-version')).toBeNull();
    fireEvent.change(screen.getByLabelText('Version'), { target: { value: '1' } });
    await waitFor(() => expect(diffUrls).toEqual(['/api/tasks/t_v2/diff', '/api/tasks/t_v2/diff?version=1']));
    const said = 'The changes shown are version 1’s; this gate decides on version 2.';
    expect(screen.getByTestId('other-version').textContent).toBe(said);
    fireEvent.keyDown(document.body, { key: 'a' });
    expect(screen.getByRole('alertdialog').textContent).toContain(`Approve execution review of version 2? ${said}`);
    fireEvent.change(screen.getByLabelText('Version'), { target: { value: '2' } });
    expect(screen.queryByTestId('other-version')).toBeNull();
  });
});

describe('TaskDetailPanel at plan review', () => {
  it('shows the plan the gate decides on right under the gate, before the fields (it came after them and the graph)', async () => {
    vi.stubGlobal('EventSource', FakeSource);
    const task = makeTask({ status: 'plan_review', title: 'Add a farewell', plan: 'Write farewell(name) in greet.js, then test it.' });
    vi.stubGlobal('fetch', async () => new Response(JSON.stringify({ task, runs: [], children: [], lastDecision: null, versions: [] })));
    render(<TaskDetailPanel taskId={task.id} />);
    const plan = await screen.findByRole('heading', { name: 'Plan' });
    const fields = screen.getByRole('heading', { name: 'Fields' });
    const approve = screen.getByRole('button', { name: /^Approve/ });
    expect(approve.compareDocumentPosition(plan) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    expect(plan.compareDocumentPosition(fields) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    expect(screen.getAllByRole('heading', { name: 'Plan' })).toHaveLength(1);
  });
});

describe('TaskDetailPanel of a planned parent', () => {
  it('shows no review of changes for a done parent whose subtasks made them (it said the diff could not be loaded)', async () => {
    vi.stubGlobal('EventSource', FakeSource);
    const parent = makeTask({ status: 'done', title: 'Build a greeting command' });
    const child = makeTask({ status: 'done', title: 'Define the greeting', parentId: parent.id });
    const urls: string[] = [];
    vi.stubGlobal('fetch', async (url: string) => {
      urls.push(url);
      if (url.includes('/diff')) return new Response(JSON.stringify({ error: { code: 'NO_CHANGES', message: 'it has no branch yet' } }), { status: 409 });
      if (url.includes('/checks')) return new Response(JSON.stringify({ checks: [] }));
      if (url.includes('/findings')) return new Response(JSON.stringify({ verdicts: [], findings: [] }));
      const plan = { id: 'r_plan', taskId: parent.id, kind: 'plan', status: 'succeeded', model: null, traceId: 'tr', attempt: 1, startedAt: 1000, endedAt: 1500,
        inputTokens: 10, outputTokens: 5, costUsd: 0, error: null, runDir: null, owner: null, workerPid: null, outboxOffset: 0, outboxSeq: 0 };
      return new Response(JSON.stringify({ task: parent, runs: [plan], children: [child], lastDecision: null, versions: [] }));
    });
    render(<TaskDetailPanel taskId={parent.id} />);
    expect(await screen.findByText('Build a greeting command')).toBeTruthy();
    await screen.findByText('Fields');
    // Given time to fetch a review, none is asked for and no error is said.
    await act(async () => {});
    expect(screen.queryByText(/The diff could not be loaded/)).toBeNull();
    expect(screen.queryByText('Review')).toBeNull();
    expect(urls.some((u) => u.includes('/diff'))).toBe(false);
  });
});

describe('TaskDetailPanel opened by link', () => {
  it("shows the task's own project behind it", async () => {
    vi.stubGlobal('EventSource', FakeSource);
    const task = makeTask({ projectId: 'p_b', status: 'executing', title: 'In project B' });
    useProjects.setState({ selectedId: 'p_a', projects: [] });
    useTasks.setState({ projectId: 'p_a', byId: {}, touched: {}, gone: {} });
    const urls: string[] = [];
    vi.stubGlobal('fetch', async (url: string) => {
      urls.push(url);
      if (url.startsWith('/api/tasks?')) return new Response(JSON.stringify({ tasks: [summarizeTask(task)] }));
      return new Response(JSON.stringify({ task, runs: [], children: [], lastDecision: null, versions: [] }));
    });
    render(<TaskDetailPanel taskId={task.id} />);
    expect(await screen.findByText('In project B')).toBeTruthy();
    await waitFor(() => expect(useTasks.getState().byId[task.id]?.title).toBe('In project B'));
    expect(useProjects.getState().selectedId).toBe('p_b');
    expect(useTasks.getState().projectId).toBe('p_b');
    expect(urls).toContain('/api/tasks?projectId=p_b&limit=5000&view=board');
  });
});

describe('LiveOutput', () => {
  it('renders agent output as text, phases and questions marked', () => {
    vi.stubGlobal('EventSource', FakeSource);
    const { container } = render(<LiveOutput taskId="t1" running />);
    const src = FakeSource.last!;
    expect(src.url).toBe('/api/tasks/t1/stream');
    act(() => {
      src.onopen?.();
      src.emit('phase', 'r:1', { runId: 'r', seq: 1, stage: 'agent', state: 'start' });
      src.emit('token', 'r:2', { runId: 'r', seq: 2, text: '<script>alert(1)</script><img src=x>' });
      src.emit('clarify', 'r:3', { runId: 'r', seq: 3, question: 'Which one?' });
      src.emit('phase', 'r:4', { runId: 'r', seq: 4, stage: 'tool:command_execution', state: 'done', summary: 'npm test' });
    });
    const log = screen.getByTestId('live-output');
    expect(log.textContent).toContain('▸ tool:command_execution done · npm test');
    expect(log.textContent).toContain('<script>alert(1)</script><img src=x>');
    expect(log.textContent).toContain('? Which one?');
    expect(container.querySelector('script, img')).toBeNull();
    expect(screen.getByText('(live)')).toBeTruthy();
  });

  it('says, where the output would be, what the replay left out and where all of it is', () => {
    vi.stubGlobal('EventSource', FakeSource);
    render(<LiveOutput taskId="t3" running />);
    const src = FakeSource.last!;
    act(() => {
      src.onopen?.();
      const gap = { runId: 'r_9', firstSeq: 4000, unreadBytes: 3_000_000, transcript: '/api/tasks/t3/transcript?runId=r_9' };
      src.emit('replay.truncated', '', { ...gap, runs: [gap] });
      src.emit('token', 'r_9:4000', { runId: 'r_9', seq: 4000, text: 'the newest output' });
    });
    const notice = '\n… Earlier output of run r_9 is left out here, too long to replay; the Transcript below has all of it.\n';
    expect(screen.getByTestId('live-output').textContent).toBe(`${notice}the newest output`);
    // A replay of 1 MiB is more than the view keeps (200,000 characters): the oldest output goes, the notice stays.
    act(() => {
      for (let i = 1; i <= 5; i++) src.emit('token', `r_9:${4000 + i}`, { runId: 'r_9', seq: 4000 + i, text: `${i}${'x'.repeat(60_000)}` });
    });
    const text = screen.getByTestId('live-output').textContent!;
    expect(text.startsWith(`${notice}3x`)).toBe(true);
    expect(text.length).toBe(notice.length + 3 * 60_001);
  });

  it('says once what a replay spanning several runs left out, naming each run', () => {
    vi.stubGlobal('EventSource', FakeSource);
    render(<LiveOutput taskId="t4" running />);
    const src = FakeSource.last!;
    const gap = (runId: string, firstSeq: number | null) => ({ runId, firstSeq, unreadBytes: 900_000, transcript: `/api/tasks/t4/transcript?runId=${runId}` });
    act(() => {
      src.onopen?.();
      // As the daemon sends it to a client resuming in its oldest run: one event for the three runs.
      const runs = [gap('r_1', null), gap('r_2', null), gap('r_3', 70)];
      src.emit('replay.truncated', '', { ...runs[0], runs });
      src.emit('token', 'r_3:70', { runId: 'r_3', seq: 70, text: 'the newest output' });
    });
    expect(screen.getByTestId('live-output').textContent).toBe(
      '\n… Earlier output of 3 runs (r_1, r_2, r_3) is left out here, too long to replay; the Transcript below has all of each (pick the run there).\nthe newest output',
    );
  });

  it('is not called live when no run is in progress, even with the stream open', () => {
    vi.stubGlobal('EventSource', FakeSource);
    render(<LiveOutput taskId="t2" running={false} />);
    act(() => FakeSource.last!.onopen?.());
    expect(screen.queryByText('(live)')).toBeNull();
    expect(screen.getByText('(no run in progress)')).toBeTruthy();
  });
});
