import { fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Project } from '../api/types.js';
import { BoardScreen } from '../screens/BoardScreen.js';
import { useProjects } from '../stores/projects.js';
import { useRoute } from '../stores/route.js';
import { useTasks } from '../stores/tasks.js';
import { makeTask } from '../testData.js';

afterEach(() => {
  vi.unstubAllGlobals();
  window.location.hash = '';
});

const project: Project = { id: 'p1', name: 'shop', repoPath: '/repos/shop', config: {}, createdAt: 1, updatedAt: 1, archivedAt: null };

function showBoard(p: Project = project) {
  useProjects.setState({ projects: [p], selectedId: p.id, loaded: true, error: null });
  useTasks.setState({ projectId: p.id, byId: {}, loading: false, error: null, touched: {}, gone: {} });
  render(<BoardScreen />);
}

describe('creating a task from the board', () => {
  it('sends the title, what it should do, priority and complexity, then shows the task and opens it', async () => {
    const sent: unknown[] = [];
    const created = makeTask({ projectId: 'p1', title: 'Add a farewell', priority: 0, complexity: 'easy', spec: 'greet.js also says goodbye' });
    vi.stubGlobal('fetch', async (url: string, init?: RequestInit) => {
      if (url === '/api/tasks' && init?.method === 'POST') {
        sent.push(JSON.parse(String(init.body)));
        return new Response(JSON.stringify({ task: created }), { status: 201 });
      }
      return new Response(JSON.stringify({ error: { code: 'NOT_FOUND', message: 'no route' } }), { status: 404 });
    });
    showBoard();
    fireEvent.click(screen.getByRole('button', { name: 'New task' }));
    const form = screen.getByRole('form', { name: 'New task' });
    const create = within(form).getByRole('button', { name: 'Create' }) as HTMLButtonElement;
    expect(create.disabled).toBe(true); // no title yet
    fireEvent.change(within(form).getByLabelText('Title'), { target: { value: '  Add a farewell ' } });
    fireEvent.change(within(form).getByLabelText('Specification'), { target: { value: 'greet.js also says goodbye' } });
    fireEvent.change(within(form).getByLabelText('Priority'), { target: { value: '0' } });
    fireEvent.change(within(form).getByLabelText('Complexity'), { target: { value: 'easy' } });
    fireEvent.click(create);
    await vi.waitFor(() => expect(useRoute.getState().route).toEqual({ name: 'board', taskId: created.id }));
    expect(sent).toEqual([{ projectId: 'p1', title: 'Add a farewell', spec: 'greet.js also says goodbye', priority: 0, complexity: 'easy' }]);
    expect(screen.getByText('Add a farewell')).toBeTruthy(); // on the board at once
    expect(screen.queryByRole('form', { name: 'New task' })).toBeNull();
  });

  it("says why the daemon refused, in the person's language, and keeps what was typed", async () => {
    vi.stubGlobal('fetch', async () => new Response(JSON.stringify({ error: { code: 'BAD_INPUT', message: 'title: too long' } }), { status: 400 }));
    showBoard();
    fireEvent.click(screen.getByRole('button', { name: 'New task' }));
    const form = screen.getByRole('form', { name: 'New task' });
    fireEvent.change(within(form).getByLabelText('Title'), { target: { value: 'Add a farewell' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Create' }));
    expect((await within(form).findByRole('alert')).textContent).toBe('title: too long');
    expect((within(form).getByLabelText('Title') as HTMLInputElement).value).toBe('Add a farewell');
    // Cancel closes it.
    fireEvent.click(within(form).getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('form', { name: 'New task' })).toBeNull();
  });

  it('sends the tasks it waits for, picked by title, so it is created waiting (Edit after creation came too late: a ready task is claimed within a tick)', async () => {
    const sent: unknown[] = [];
    const median = makeTask({ projectId: 'p1', title: 'Add median', status: 'plan_review' });
    const created = makeTask({ projectId: 'p1', title: 'Add variance', deps: [median.id] });
    vi.stubGlobal('fetch', async (url: string, init?: RequestInit) => {
      if (url === '/api/tasks' && init?.method === 'POST') {
        sent.push(JSON.parse(String(init.body)));
        return new Response(JSON.stringify({ task: created }), { status: 201 });
      }
      return new Response(JSON.stringify({ error: { code: 'NOT_FOUND', message: 'no route' } }), { status: 404 });
    });
    showBoard();
    useTasks.getState().upsert(median);
    fireEvent.click(screen.getByRole('button', { name: 'New task' }));
    const form = screen.getByRole('form', { name: 'New task' });
    fireEvent.change(within(form).getByLabelText('Title'), { target: { value: 'Add variance' } });
    expect(within(form).getByText('It waits for no task.')).toBeTruthy();
    const box = within(form).getByLabelText('Add a dependency');
    fireEvent.change(box, { target: { value: 'medi' } });
    fireEvent.keyDown(box, { key: 'ArrowDown' });
    fireEvent.keyDown(box, { key: 'Enter' }); // picks the task; does not submit the form
    expect(sent).toEqual([]);
    expect(within(form).getByRole('button', { name: 'Remove the dependency on Add median' })).toBeTruthy();
    fireEvent.click(within(form).getByRole('button', { name: 'Create' }));
    await vi.waitFor(() => expect(sent).toHaveLength(1));
    expect(sent).toEqual([{ projectId: 'p1', title: 'Add variance', priority: 1, complexity: 'medium', deps: [median.id] }]);
  });

  it('is not offered for an archived project (it takes no new work)', () => {
    showBoard({ ...project, archivedAt: 5 });
    expect(screen.queryByRole('button', { name: 'New task' })).toBeNull();
  });
});
