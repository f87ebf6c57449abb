import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { makeTask } from '../../testData.js';
import { TaskActions } from './TaskActions.js';

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

/** Answers `METHOD path` with `json`; every request is kept in `sent`. */
function serve(answers: Record<string, unknown>, sent: Array<{ what: string; body: unknown }>) {
  vi.stubGlobal('fetch', async (url: string, init?: RequestInit) => {
    const what = `${init?.method ?? 'GET'} ${url.split('?')[0]}`;
    sent.push({ what, body: init?.body ? JSON.parse(String(init.body)) : undefined });
    return what in answers ? new Response(JSON.stringify(answers[what])) : new Response(JSON.stringify({ error: { code: 'NOT_FOUND', message: 'no route' } }), { status: 404 });
  });
}

describe('task actions on the board', () => {
  it('cancels after a confirmation and names the subtasks cancelled with it; "No, keep the task" sends nothing', async () => {
    const task = makeTask({ status: 'waiting_children' });
    const sent: Array<{ what: string; body: unknown }> = [];
    serve({ [`POST /api/tasks/${task.id}/cancel`]: { task: { ...task, status: 'cancelled' }, subtasksCancelled: [{ id: 't_w', title: 'Wire' }, { id: 't_d', title: 'Document' }] } }, sent);
    const onDone = vi.fn();
    render(<TaskActions task={task} onDone={onDone} />);
    expect(screen.queryByRole('button', { name: 'Retry' })).toBeNull();

    fireEvent.click(screen.getByRole('button', { name: 'Cancel this task…' }));
    expect(screen.getByText('Cancel this task? Its work stops, and its unfinished subtasks are cancelled with it.')).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'No, keep the task' }));
    expect(sent).toEqual([]);

    fireEvent.click(screen.getByRole('button', { name: 'Cancel this task…' }));
    fireEvent.click(screen.getByRole('button', { name: 'Yes, cancel the task' }));
    expect((await screen.findByText('Cancelled, with 2 unfinished subtasks: “Wire”, “Document”.')).getAttribute('role')).toBe('status');
    expect(sent).toEqual([{ what: `POST /api/tasks/${task.id}/cancel`, body: { who: 'web' } }]);
    expect(onDone).toHaveBeenCalledTimes(1);
  });

  it('retries a task that needs attention and says where it went; a refusal is shown as the daemon said it', async () => {
    const task = makeTask({ status: 'needs_attention' });
    const sent: Array<{ what: string; body: unknown }> = [];
    serve({ [`POST /api/tasks/${task.id}/retry`]: { task: { ...task, status: 'waiting_children' } } }, sent);
    const onDone = vi.fn();
    render(<TaskActions task={task} onDone={onDone} />);
    fireEvent.click(screen.getByRole('button', { name: 'Retry' }));
    expect((await screen.findByText('Retried: it is now waiting for subtasks.')).getAttribute('role')).toBe('status');
    expect(onDone).toHaveBeenCalledTimes(1);

    vi.stubGlobal('fetch', async () => new Response(JSON.stringify({ error: { code: 'PROJECT_ARCHIVED', message: 'Project shop is archived: no task can be retried in it.' } }), { status: 409 }));
    fireEvent.click(screen.getByRole('button', { name: 'Retry' }));
    expect((await screen.findByText(/Project shop is archived/)).getAttribute('role')).toBe('alert');
  });

  it('offers nothing for a task that is done', () => {
    render(<TaskActions task={makeTask({ status: 'done' })} onDone={() => {}} />);
    expect(screen.queryByTestId('task-actions')).toBeNull();
  });
});
