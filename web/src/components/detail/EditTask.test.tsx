import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { summarizeTask, TASK_STATUSES, type Task } from '../../api/types.js';
import { useTasks } from '../../stores/tasks.js';
import { makeTask } from '../../testData.js';
import { EditTask } from './EditTask.js';

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

type Sent = Array<{ what: string; body: unknown }>;

/** Answers every PATCH with `answer` (status and JSON); every request is kept in `sent`. */
function serve(sent: Sent, answer: (body: Record<string, unknown>) => { status: number; json: unknown }) {
  vi.stubGlobal('fetch', async (url: string, init?: RequestInit) => {
    const body = init?.body ? JSON.parse(String(init.body)) : undefined;
    sent.push({ what: `${init?.method ?? 'GET'} ${url}`, body });
    const { status, json } = answer(body);
    return new Response(JSON.stringify(json), { status });
  });
}

/** The project's tasks on the board, which the dependency list offers. */
function board(...tasks: Task[]) {
  useTasks.setState({ projectId: 'p1', byId: Object.fromEntries(tasks.map((t) => [t.id, summarizeTask(t)])), touched: {}, gone: {} });
}

const button = (name: string) => screen.getByRole('button', { name }) as HTMLButtonElement;

describe('editing a task on the board', () => {
  it('sends only the fields changed, says which were saved, and refreshes the detail', async () => {
    const schema = makeTask({ title: 'Schema', status: 'done' });
    const wire = makeTask({ title: 'Wire' });
    const gone = makeTask({ title: 'Gone', status: 'cancelled' });
    const old = makeTask({ title: 'Wire (v1)', status: 'superseded' });
    const task = makeTask({ title: 'Greet', priority: 1, deps: [schema.id], ownedFiles: ['src/greet.ts'], spec: 'Say hello.', taskType: 'feature' });
    board(schema, wire, gone, old, task);
    const sent: Sent = [];
    serve(sent, (body) => ({ status: 200, json: { task: { ...task, ...body } } }));
    const onDone = vi.fn();
    render(<EditTask task={task} onDone={onDone} />);

    fireEvent.click(button('Edit'));
    const title = screen.getByLabelText('Title') as HTMLInputElement;
    expect(document.activeElement).toBe(title);
    // Nothing changed: nothing to save.
    expect(button('Save').disabled).toBe(true);
    fireEvent.change(title, { target: { value: '  Greet everyone ' } });
    fireEvent.change(screen.getByLabelText('Priority'), { target: { value: '0' } });
    // A change taken back is no change.
    fireEvent.change(screen.getByLabelText('Complexity'), { target: { value: 'hard' } });
    fireEvent.change(screen.getByLabelText('Complexity'), { target: { value: 'medium' } });
    // The dependencies offered: the project's other tasks, not superseded versions nor cancelled tasks (DepPicker.test.tsx).
    const box = screen.getByRole('combobox', { name: 'Add a dependency' });
    fireEvent.keyDown(box, { key: 'ArrowDown' });
    expect(within(screen.getByRole('listbox')).getAllByRole('option').map((o) => o.textContent)).toEqual([`Wire ${wire.id} ready`]);
    fireEvent.keyDown(box, { key: 'Enter' });
    expect(screen.getByRole('button', { name: 'Remove the dependency on Wire' })).toBeTruthy();
    fireEvent.click(button('Save'));

    expect((await screen.findByText('Saved: Title, Priority, Depends on.')).getAttribute('role')).toBe('status');
    expect(sent).toEqual([{ what: `PATCH /api/tasks/${task.id}`, body: { title: 'Greet everyone', priority: 0, deps: [schema.id, wire.id] } }]);
    expect(onDone).toHaveBeenCalledTimes(1);
    // The form closed; the keyboard is back on Edit.
    expect(screen.queryByLabelText('Title')).toBeNull();
    await waitFor(() => expect(document.activeElement).toBe(button('Edit'))); // focus moves after the close renders: on a busy machine, later
  });

  it('clears a text field and drops a dependency and an owned file as null and shorter lists; hidden characters in titles are shown', async () => {
    const dep = makeTask({ title: 'Sche\u202ema' });
    const task = makeTask({ title: 'Greet\u200b', deps: [dep.id], ownedFiles: ['src/a.ts', 'src/b.ts'], expectedOutput: 'A greeting.' });
    board(dep, task);
    const sent: Sent = [];
    serve(sent, () => ({ status: 200, json: { task } }));
    render(<EditTask task={task} onDone={() => {}} />);
    fireEvent.click(button('Edit'));
    // The box holds the title itself (saved unchanged, it is not sent); the board's way of showing it is said under it.
    expect((screen.getByLabelText('Title') as HTMLInputElement).value).toBe('Greet\u200b');
    expect(screen.getByText('The title holds characters drawn as nothing or that reorder the text; the board shows it as: Greet\\u{200b}')).toBeTruthy();
    expect(screen.getByText('Sche\\u{202e}ma', { exact: false })).toBeTruthy();
    fireEvent.click(button('Remove the dependency on Sche\\u{202e}ma'));
    expect(screen.getByText('It waits for no task.')).toBeTruthy();
    fireEvent.change(screen.getByLabelText('Owned files'), { target: { value: 'src/a.ts\n\n' } });
    fireEvent.change(screen.getByLabelText('Expected output'), { target: { value: '' } });
    fireEvent.click(button('Save'));
    await screen.findByText('Saved: Depends on, Owned files, Expected output.');
    expect(sent.map((s) => s.body)).toEqual([{ deps: [], ownedFiles: ['src/a.ts'], expectedOutput: null }]);
  });

  it('shows the daemon’s refusal as it said it, and keeps the form and what was typed', async () => {
    const dep = makeTask({ title: 'Schema' });
    const task = makeTask({ status: 'exec_review', title: 'Greet' });
    board(dep, task);
    const refusal = `Task ${task.id} is exec_review: its work started without ${dep.id}, which is ready; a dependency added now must be done already (or cancel the task and retry it: from ready it waits for its dependencies).`;
    const sent: Sent = [];
    serve(sent, () => ({ status: 409, json: { error: { code: 'ILLEGAL_TRANSITION', message: refusal } } }));
    const onDone = vi.fn();
    render(<EditTask task={task} onDone={onDone} />);
    fireEvent.click(button('Edit'));
    fireEvent.change(screen.getByLabelText('Title'), { target: { value: 'Greet later' } });
    fireEvent.change(screen.getByRole('combobox', { name: 'Add a dependency' }), { target: { value: 'sch' } });
    fireEvent.click(screen.getByRole('option', { name: `Schema ${dep.id} ready` }));
    fireEvent.click(button('Save'));

    const alert = await screen.findByTestId('edit-refused');
    expect(alert.getAttribute('role')).toBe('alert');
    expect(alert.textContent).toBe(refusal);
    expect(onDone).not.toHaveBeenCalled();
    expect((screen.getByLabelText('Title') as HTMLInputElement).value).toBe('Greet later');
    expect(button('Remove the dependency on Schema')).toBeTruthy();
    expect(sent).toHaveLength(1);
  });

  it('offers Edit only in the statuses the daemon takes an edit in', () => {
    const editable = ['ready', 'plan_review', 'spec_review', 'waiting_children', 'exec_review', 'needs_attention', 'cancelled'];
    for (const status of TASK_STATUSES) {
      render(<EditTask task={makeTask({ status })} onDone={() => {}} />);
      expect(screen.queryByRole('button', { name: 'Edit' }) !== null, status).toBe(editable.includes(status));
      cleanup();
    }
  });

  it('keeps what was typed but cannot save once the task is claimed under the open form; Escape leaves the form, not the task', () => {
    const task = makeTask({ title: 'Greet' });
    board(task);
    const sent: Sent = [];
    serve(sent, () => ({ status: 200, json: { task } }));
    const outside = vi.fn();
    const { rerender } = render(
      <div onKeyDown={outside}>
        <EditTask task={task} onDone={() => {}} />
      </div>,
    );
    fireEvent.click(button('Edit'));
    fireEvent.change(screen.getByLabelText('Title'), { target: { value: 'Greet all' } });
    rerender(
      <div onKeyDown={outside}>
        <EditTask task={{ ...task, status: 'queued' }} onDone={() => {}} />
      </div>,
    );
    expect(screen.getByRole('status').textContent).toMatch(/^It is queued now, which takes no edit/);
    expect(button('Save').disabled).toBe(true);
    expect((screen.getByLabelText('Title') as HTMLInputElement).value).toBe('Greet all');

    fireEvent.keyDown(screen.getByLabelText('Title'), { key: 'Escape' });
    expect(screen.queryByLabelText('Title')).toBeNull();
    expect(outside).not.toHaveBeenCalled();
    expect(sent).toEqual([]);
  });
});
