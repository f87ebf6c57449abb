import { afterEach, describe, expect, it, vi } from 'vitest';
import { makeTask } from '../testData.js';
import { parseRoute, href } from './route.js';
import { useTasks } from './tasks.js';

afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

describe('tasks store', () => {
  it('moves a task on a status event at once, then refetches it', async () => {
    vi.useFakeTimers();
    const t = makeTask({ status: 'queued' });
    useTasks.setState({ projectId: 'p1', byId: { [t.id]: t }, touched: {}, gone: {} });
    const fetched = { ...t, status: 'planning' as const, title: 'renamed', updatedAt: 5 };
    const urls: string[] = [];
    vi.stubGlobal('fetch', async (url: string) => {
      urls.push(url);
      return new Response(JSON.stringify({ task: fetched, runs: [], children: [], lastDecision: null }));
    });
    useTasks.getState().applyEvent({ id: 1, projectId: 'p1', taskId: t.id, runId: null, traceId: null, type: 'task.status', payload: { from: 'queued', to: 'planning' }, at: 5 });
    useTasks.getState().applyEvent({ id: 2, projectId: 'p1', taskId: t.id, runId: null, traceId: null, type: 'run.phase', payload: {}, at: 6 });
    expect(useTasks.getState().byId[t.id]!.status).toBe('planning');
    expect(useTasks.getState().touched[t.id]).toBe(2);
    await vi.advanceTimersByTimeAsync(200);
    expect(urls).toEqual([`/api/tasks/${t.id}`]); // two events, one request
    expect(useTasks.getState().byId[t.id]!.title).toBe('renamed');
  });

  it('a list or a task read before an event does not put the older state back', async () => {
    const t = makeTask({ status: 'planning', updatedAt: 100 });
    useTasks.setState({ projectId: 'p1', byId: { [t.id]: t }, touched: {}, gone: {} });
    const answers: Array<(r: Response) => void> = [];
    vi.stubGlobal('fetch', () => new Promise<Response>((r) => answers.push(r)));
    const loading = useTasks.getState().load('p1');
    await vi.waitFor(() => expect(answers).toHaveLength(1));
    // The list was read on the server before this change; its event arrives first.
    useTasks.getState().applyEvent({ id: 1, projectId: 'p1', taskId: t.id, runId: null, traceId: null, type: 'task.status', payload: { from: 'planning', to: 'plan_review' }, at: 200 });
    answers[0]!(new Response(JSON.stringify({ tasks: [t] })));
    await loading;
    expect(useTasks.getState().byId[t.id]!.status).toBe('plan_review');
    useTasks.getState().upsert({ ...t, status: 'planning', updatedAt: 150 } as never);
    expect(useTasks.getState().byId[t.id]!.status).toBe('plan_review');
    // A read as new as the event (the same transaction wrote both) or newer replaces it.
    useTasks.getState().upsert({ ...t, status: 'plan_review', title: 'renamed', updatedAt: 200 } as never);
    expect(useTasks.getState().byId[t.id]!.title).toBe('renamed');
  });

  it("a task's next version takes its place in its dependents' deps and as its subtasks' parent: each moved task is read again on its task.edited event", async () => {
    // The server moves them in the rejection's transaction with a task.edited event for each (store/ops/nextVersion.ts);
    // the board reads each one again on its event (else the graph drawn from the rows kept the superseded version's edges).
    vi.useFakeTimers();
    const v1 = makeTask({ status: 'exec_review' });
    const dependent = makeTask({ deps: [v1.id] });
    const child = makeTask({ parentId: v1.id });
    const other = makeTask();
    useTasks.setState({ projectId: 'p1', byId: Object.fromEntries([v1, dependent, child, other].map((t) => [t.id, t])), touched: {}, gone: {} });
    const v2 = makeTask({ parentVersionId: v1.id, version: 2, title: v1.title });
    const onServer: Record<string, unknown> = {
      [v2.id]: v2,
      [dependent.id]: { ...dependent, deps: [v2.id], updatedAt: dependent.updatedAt + 1 },
      [child.id]: { ...child, parentId: v2.id, updatedAt: child.updatedAt + 1 },
    };
    const urls: string[] = [];
    vi.stubGlobal('fetch', async (url: string) => {
      urls.push(url);
      const task = onServer[url.slice('/api/tasks/'.length)];
      return new Response(JSON.stringify({ task, runs: [], children: [], lastDecision: null }));
    });
    useTasks.getState().upsert(v2); // the new version, read on its own event
    // The new version alone moves nothing: the rows shown are the server's, not a copy of its move.
    expect(useTasks.getState().byId[dependent.id]!.deps).toEqual([v1.id]);
    let id = 1;
    for (const moved of [dependent, child]) {
      useTasks.getState().applyEvent({ id: id++, projectId: 'p1', taskId: moved.id, runId: null, traceId: null, type: 'task.edited', payload: { fields: [moved === child ? 'parentId' : 'deps'], nextVersion: v2.id }, at: 10 });
    }
    await vi.advanceTimersByTimeAsync(200);
    expect(urls.sort()).toEqual([`/api/tasks/${dependent.id}`, `/api/tasks/${child.id}`].sort());
    const rows = useTasks.getState().byId;
    expect(rows[dependent.id]!.deps).toEqual([v2.id]);
    expect(rows[child.id]!.parentId).toBe(v2.id);
    expect(rows[other.id]).toBe(other);
    expect(rows[v2.id]!.version).toBe(2);
  });

  it('a load while one is under way reads the list again after it', async () => {
    const t = makeTask({ status: 'planning', updatedAt: 100 });
    useTasks.setState({ projectId: 'p1', byId: {}, touched: {}, gone: {} });
    const answers: Array<(r: Response) => void> = [];
    // List reads only: the case before applied an event, whose refetch of its task may fire now on a busy machine.
    vi.stubGlobal('fetch', (url: string) => (url.startsWith('/api/tasks?') ? new Promise<Response>((r) => answers.push(r)) : new Promise<Response>(() => {})));
    const first = useTasks.getState().load('p1');
    const second = useTasks.getState().load('p1');
    const third = useTasks.getState().load('p1'); // joins the one queued
    await vi.waitFor(() => expect(answers).toHaveLength(1));
    answers[0]!(new Response(JSON.stringify({ tasks: [t] })));
    await first;
    await vi.waitFor(() => expect(answers).toHaveLength(2));
    answers[1]!(new Response(JSON.stringify({ tasks: [{ ...t, status: 'plan_review', updatedAt: 200 }] })));
    await Promise.all([second, third]);
    expect(answers).toHaveLength(2);
    expect(useTasks.getState().byId[t.id]!.status).toBe('plan_review');
  });

  it('a reload queued for a project no longer shown does not bring it back', async () => {
    useTasks.setState({ projectId: 'p1', byId: {}, touched: {}, gone: {} });
    const answers: Array<{ url: string; answer: (r: Response) => void }> = [];
    // List reads only (an earlier case's event may still refetch its task).
    vi.stubGlobal('fetch', (url: string) => (url.startsWith('/api/tasks?') ? new Promise<Response>((answer) => answers.push({ url, answer })) : new Promise<Response>(() => {})));
    const first = useTasks.getState().load('p1');
    const again = useTasks.getState().load('p1'); // queued behind the first
    await vi.waitFor(() => expect(answers).toHaveLength(1));
    const other = useTasks.getState().load('p2'); // the person opened another project meanwhile
    await vi.waitFor(() => expect(answers).toHaveLength(2));
    answers[0]!.answer(new Response(JSON.stringify({ tasks: [makeTask({ projectId: 'p1' })] })));
    await Promise.all([first, again]);
    const p2Task = makeTask({ projectId: 'p2' });
    answers[1]!.answer(new Response(JSON.stringify({ tasks: [p2Task] })));
    await other;
    expect(answers.map((a) => new URL(a.url, 'http://x').searchParams.get('projectId'))).toEqual(['p1', 'p2']); // no third read of p1
    expect(useTasks.getState().projectId).toBe('p2');
    expect(Object.keys(useTasks.getState().byId)).toEqual([p2Task.id]);
  });

  it('ignores events of other projects and drops a task the server no longer has', async () => {
    const t = makeTask();
    useTasks.setState({ projectId: 'p1', byId: { [t.id]: t }, touched: {}, gone: {} });
    useTasks.getState().applyEvent({ id: 1, projectId: 'p2', taskId: t.id, runId: null, traceId: null, type: 'task.status', payload: { to: 'done' }, at: 1 });
    expect(useTasks.getState().byId[t.id]!.status).toBe('ready');
    vi.stubGlobal('fetch', async () => new Response(JSON.stringify({ error: { code: 'UNKNOWN_TASK', message: 'gone' } }), { status: 404 }));
    await useTasks.getState().refetch(t.id);
    expect(useTasks.getState().byId[t.id]).toBeUndefined();
    expect(useTasks.getState().gone[t.id]).toBe(true);
  });
});

describe('routes', () => {
  it('round-trips every route and names an unknown one', () => {
    for (const r of [{ name: 'board' }, { name: 'board', taskId: 't/1 x' }, { name: 'board', taskId: 't_2', wide: true }, { name: 'metrics' }, { name: 'knowledge', view: 'entry', id: 'spec:project:a' }, { name: 'knowledge', view: 'review' }, { name: 'knowledge', view: 'review', id: 'task-t1' }, { name: 'observer', id: 's1' }] as const) {
      expect(parseRoute(href(r))).toEqual(r);
    }
    expect(parseRoute('#/nowhere/at/all')).toEqual({ name: 'unknown', path: '/nowhere/at/all' });
    expect(parseRoute('#/task/t_2/review/x')).toEqual({ name: 'unknown', path: '/task/t_2/review/x' });
    expect(parseRoute('#/knowledge/review/task-1/x')).toEqual({ name: 'unknown', path: '/knowledge/review/task-1/x' });
    expect(parseRoute('')).toEqual({ name: 'board' });
  });
});
