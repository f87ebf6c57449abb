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
    const fetched = { ...t, status: 'planning' as const, title: 'renamed' };
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
    for (const r of [{ name: 'board' }, { name: 'board', taskId: 't/1 x' }, { name: 'board', taskId: 't_2', wide: true }, { name: 'metrics' }, { name: 'knowledge', view: 'entry', id: 'spec:project:a' }, { name: 'knowledge', view: 'review' }, { name: 'observer', id: 's1' }] as const) {
      expect(parseRoute(href(r))).toEqual(r);
    }
    expect(parseRoute('#/nowhere/at/all')).toEqual({ name: 'unknown', path: '/nowhere/at/all' });
    expect(parseRoute('#/task/t_2/review/x')).toEqual({ name: 'unknown', path: '/task/t_2/review/x' });
    expect(parseRoute('')).toEqual({ name: 'board' });
  });
});
