/**
 * The dependency box, through the task edit form it sits in: what it offers, the keyboard and the mouse, what the
 * save sends; and the tasks it shows disabled as they would close a cycle (waitingOn, depCandidates).
 */
import { act, cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { summarizeTask, type Task, type TaskSummary } from '../../api/types.js';
import { useTasks } from '../../stores/tasks.js';
import { makeTask } from '../../testData.js';
import { depCandidates, waitingOn } from './DepPicker.js';
import { EditTask } from './EditTask.js';

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

function board(...tasks: Task[]) {
  useTasks.setState({ projectId: 'p1', byId: Object.fromEntries(tasks.map((t) => [t.id, summarizeTask(t)])), touched: {}, gone: {} });
}

/** The PATCH bodies sent; each answered with the task as saved. */
function serve(task: Task): unknown[] {
  const sent: unknown[] = [];
  vi.stubGlobal('fetch', async (_url: string, init?: RequestInit) => {
    const body = JSON.parse(String(init?.body));
    sent.push(body);
    return new Response(JSON.stringify({ task: { ...task, ...body } }), { status: 200 });
  });
  return sent;
}

/** Opens the edit form of `task`; answers the dependency box. */
function openForm(task: Task): HTMLInputElement {
  render(<EditTask task={task} onDone={() => {}} />);
  fireEvent.click(screen.getByRole('button', { name: 'Edit' }));
  const box = screen.getByRole('combobox', { name: 'Add a dependency' }) as HTMLInputElement;
  box.focus();
  return box;
}

const type = (box: HTMLElement, text: string) => fireEvent.change(box, { target: { value: text } });
/** The titles the list offers now ([] when it is closed). */
const offered = () => (screen.queryByRole('listbox') ? within(screen.getByRole('listbox')).queryAllByRole('option').map((o) => o.firstChild!.textContent) : []);
const key = (box: HTMLElement, k: string) => fireEvent.keyDown(box, { key: k });
const hex = (n: number) => `t_${n.toString(16).padStart(16, '0')}`;

describe('the dependency box', () => {
  it('filters by title in any case and by a pasted id, and never offers the task itself, a chosen, a superseded or a cancelled task', () => {
    const chosen = makeTask({ id: 't_00aa00aa00aa00aa', title: 'Schema' });
    const wire = makeTask({ id: 't_11bb11bb11bb11bb', title: 'Add the schema' });
    const docs = makeTask({ id: 't_22cc22cc22cc22cc', title: 'Schema docs', status: 'done' });
    const old = makeTask({ id: 't_33dd33dd33dd33dd', title: 'Schema docs (v1)', status: 'superseded' });
    const gone = makeTask({ id: 't_44ee44ee44ee44ee', title: 'Schema checks', status: 'cancelled' });
    const logs = makeTask({ id: 't_55ff55ff55ff55ff', title: 'Logging' });
    const task = makeTask({ id: 't_66aa66aa66aa66aa', title: 'Greet the schema', deps: [chosen.id] });
    board(chosen, wire, docs, old, gone, logs, task);
    const box = openForm(task);
    expect(box.getAttribute('aria-expanded')).toBe('false');

    // Nothing typed: ArrowDown lists every task it may wait for, by title.
    key(box, 'ArrowDown');
    expect(box.getAttribute('aria-expanded')).toBe('true');
    expect(screen.getByRole('listbox').id).toBe(box.getAttribute('aria-controls'));
    expect(offered()).toEqual(['Add the schema', 'Logging', 'Schema docs']);
    // Each with its short id and its status.
    expect(screen.getByRole('option', { name: 'Schema docs t_22cc22cc done' })).toBeTruthy();

    // A title that starts with what is typed comes first.
    type(box, 'SCHEMA');
    expect(offered()).toEqual(['Schema docs', 'Add the schema']);
    // An id as pasted, or as the list shows it.
    type(box, ` ${logs.id} `);
    expect(offered()).toEqual(['Logging']);
    type(box, 't_55ff55ff');
    expect(offered()).toEqual(['Logging']);
    // Hex digits alone are no id ("bb" is in the id of 'Add the schema', in no title).
    type(box, 'bb');
    expect(offered()).toEqual([]);
    expect(box.getAttribute('aria-expanded')).toBe('false');
    expect(screen.getByText('No other task matches: superseded and cancelled tasks, and those already chosen, are not offered.').id).toBe(box.getAttribute('aria-describedby'));
    for (const excluded of [task, chosen, old, gone]) {
      type(box, excluded.id);
      expect(offered(), excluded.title).toEqual([]);
    }
  });

  it('lists at most 20 of 300 tasks and says how many more; typing narrows until all fit', () => {
    const many = Array.from({ length: 300 }, (_, i) => makeTask({ id: hex(i + 1), title: `Step ${String(i + 1).padStart(3, '0')}` }));
    const task = makeTask({ title: 'Greet' });
    board(...many, task);
    const box = openForm(task);

    key(box, 'ArrowDown');
    expect(offered()).toEqual(many.slice(0, 20).map((t) => t.title));
    expect(screen.getByText('280 more — type to narrow')).toBeTruthy();
    type(box, 'step 2');
    expect(offered()).toHaveLength(20);
    expect(screen.getByText('80 more — type to narrow')).toBeTruthy();
    type(box, 'step 29');
    expect(offered()).toEqual(Array.from({ length: 10 }, (_, i) => `Step 29${i}`));
    expect(screen.queryByText(/more — type to narrow/)).toBeNull();
  });

  it('adds the task ArrowDown moved to with Enter, without saving; the save sends it', async () => {
    const schema = makeTask({ title: 'Schema' });
    const wire = makeTask({ title: 'Wire' });
    const wiki = makeTask({ title: 'Wiki' });
    const task = makeTask({ title: 'Greet', deps: [schema.id] });
    board(schema, wire, wiki, task);
    const sent = serve(task);
    const box = openForm(task);

    type(box, 'w');
    // Typing makes no option active: Enter alone adds nothing, and is kept from submitting the form (a browser's
    // implicit submission, which jsdom does not do, is the default it prevents).
    expect(box.getAttribute('aria-activedescendant')).toBeNull();
    expect(fireEvent.keyDown(box, { key: 'Enter' })).toBe(false);
    expect(sent).toEqual([]);
    expect(screen.queryByRole('button', { name: /^Remove the dependency on W/ })).toBeNull();

    const active = () => document.getElementById(box.getAttribute('aria-activedescendant') ?? '')?.firstChild?.textContent;
    expect(offered()).toEqual(['Wiki', 'Wire']);
    key(box, 'ArrowDown');
    expect(active()).toBe('Wiki');
    key(box, 'ArrowDown');
    key(box, 'ArrowDown');
    expect(active()).toBe('Wire');
    key(box, 'ArrowUp');
    expect(active()).toBe('Wiki');
    key(box, 'ArrowDown');
    // The active option is the one selected, and the only one.
    const selected = within(screen.getByRole('listbox')).getAllByRole('option', { selected: true });
    expect(selected.map((o) => o.id)).toEqual([box.getAttribute('aria-activedescendant')]);
    expect(active()).toBe('Wire');
    key(box, 'Enter');

    expect(screen.getByRole('button', { name: 'Remove the dependency on Wire' })).toBeTruthy();
    expect(box.value).toBe('');
    expect(box.getAttribute('aria-expanded')).toBe('false');
    expect(document.activeElement).toBe(box);
    expect(sent).toEqual([]);
    // Chosen, it is offered no more.
    key(box, 'ArrowDown');
    expect(offered()).toEqual(['Wiki']);

    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await screen.findByText('Saved: Depends on.');
    expect(sent).toEqual([{ deps: [schema.id, wire.id] }]);
  });

  it('adds the one task a pasted id matches with Enter alone, and a task clicked', () => {
    const wire = makeTask({ id: 't_77aa77aa77aa77aa', title: 'Wire' });
    const odd = makeTask({ id: 't_88bb88bb88bb88bb', title: '<b>Sche\u202ema</b>' });
    const task = makeTask({ title: 'Greet' });
    board(wire, odd, task);
    const box = openForm(task);

    type(box, wire.id);
    key(box, 'Enter');
    expect(screen.getByRole('button', { name: 'Remove the dependency on Wire' })).toBeTruthy();

    // A title is drawn as text, its hidden characters as \u{…}; the click keeps the keyboard in the box.
    type(box, 'sche');
    const option = screen.getByRole('option', { name: `<b>Sche\\u{202e}ma</b> t_88bb88bb ready` });
    expect(option.querySelector('b')).toBeNull();
    expect(fireEvent.mouseDown(option)).toBe(false);
    fireEvent.click(option);
    expect(screen.getByRole('button', { name: 'Remove the dependency on <b>Sche\\u{202e}ma</b>' })).toBeTruthy();
    expect(box.value).toBe('');
  });

  it('clears the box and closes the list on Escape, and only then leaves the form', () => {
    const wire = makeTask({ title: 'Wire' });
    const task = makeTask({ title: 'Greet' });
    board(wire, task);
    const box = openForm(task);

    type(box, 'wi');
    key(box, 'ArrowDown');
    expect(box.getAttribute('aria-activedescendant')).not.toBeNull();
    key(box, 'Escape');
    expect(box.value).toBe('');
    expect(box.getAttribute('aria-expanded')).toBe('false');
    expect(box.getAttribute('aria-activedescendant')).toBeNull();
    expect(screen.queryByRole('button', { name: 'Remove the dependency on Wire' })).toBeNull();
    expect(screen.getByRole('combobox', { name: 'Add a dependency' })).toBe(box);

    key(box, 'Escape');
    expect(screen.queryByRole('combobox')).toBeNull();
    expect(screen.getByRole('button', { name: 'Edit' })).toBeTruthy();
  });
});

/** A board row: only the id and the deps count for waitingOn. */
const row = (id: string, deps: string[] = [], title = id): TaskSummary => summarizeTask(makeTask({ id, title, deps }));

describe('waitingOn: the tasks that would close a cycle', () => {
  it('walks back from the task through every task that waits for it, directly or through others, and no further', () => {
    const tasks = [
      row('t_task', ['t_base']),
      row('t_base'),
      // Waits for t_base as t_task does: no cycle.
      row('t_sibling', ['t_base']),
      row('t_direct', ['t_task']),
      row('t_through', ['t_direct']),
      row('t_far', ['t_base', 't_through']),
      // A diamond: reached twice, listed once.
      row('t_both', ['t_direct', 't_through']),
      // The task waits for t_base; t_after waits for t_sibling: neither waits for the task.
      row('t_after', ['t_sibling']),
    ];
    expect([...waitingOn(tasks, 't_task')].sort()).toEqual(['t_both', 't_direct', 't_far', 't_through']);
    expect([...waitingOn(tasks, 't_base')].sort()).toEqual(['t_after', 't_both', 't_direct', 't_far', 't_sibling', 't_task', 't_through']);
    expect(waitingOn(tasks, 't_after')).toEqual(new Set());
  });

  it('takes deps on tasks the board has not loaded, a task missing itself, and a cycle the store already holds', () => {
    const tasks = [row('t_a', ['t_unloaded']), row('t_b', ['t_a', 't_gone']), row('t_c', ['t_task']), row('t_x', ['t_y', 't_task']), row('t_y', ['t_x'])];
    // What waits for t_unloaded through nothing loaded: only what the board has.
    expect([...waitingOn(tasks, 't_unloaded')].sort()).toEqual(['t_a', 't_b']);
    // t_task is not on the board (its form opened from a detail read alone): what waits for it still is.
    expect([...waitingOn(tasks, 't_task')].sort()).toEqual(['t_c', 't_x', 't_y']);
    expect(waitingOn([], 't_task')).toEqual(new Set());
    // A cycle through the task itself (the board's rows older than the daemon's): never the task itself.
    expect(waitingOn([row('t_task', ['t_loop']), row('t_loop', ['t_task'])], 't_task')).toEqual(new Set(['t_loop']));
  });

  it('reads each task once, and a chain of 100 000 tasks without overflowing the stack', () => {
    const n = 100_000;
    let reads = 0;
    const chain = Array.from({ length: n }, (_, i) => {
      const deps = [i ? `t_${i - 1}` : 't_task'];
      // Only the id and the deps are read.
      return { id: `t_${i}`, get deps() { return reads++, deps; } } as unknown as TaskSummary;
    });
    const waiting = waitingOn(chain, 't_task');
    expect(waiting.size).toBe(n);
    expect(reads).toBe(n);
  });
});

describe('depCandidates with the tasks that would close a cycle', () => {
  const tasks = [row('t_1a', [], 'Schema'), row('t_2b', [], 'Add the schema'), row('t_3c', [], 'Schema docs'), row('t_4d', [], 'Wire')];

  it('lists them after every task that may be picked, whatever the query ranks first', () => {
    const waiting = new Set(['t_1a', 't_3c']);
    expect(depCandidates(tasks, 't_me', [], 'schema', waiting).shown.map((o) => o.title)).toEqual(['Add the schema', 'Schema', 'Schema docs']);
    expect(depCandidates(tasks, 't_me', [], '', waiting).shown.map((o) => o.title)).toEqual(['Add the schema', 'Wire', 'Schema', 'Schema docs']);
    // A pasted id finds it still, to say why it is not taken.
    expect(depCandidates(tasks, 't_me', [], 't_1a', waiting).shown.map((o) => o.title)).toEqual(['Schema']);
    // None waiting: the order of the query alone.
    expect(depCandidates(tasks, 't_me', [], 'schema').shown.map((o) => o.title)).toEqual(['Schema', 'Schema docs', 'Add the schema']);
  });
});

describe('the dependency box and cycles', () => {
  const disabled = () => within(screen.getByRole('listbox')).queryAllByRole('option').filter((o) => o.getAttribute('aria-disabled') === 'true').map((o) => o.firstChild!.textContent);
  const active = (box: HTMLElement) => document.getElementById(box.getAttribute('aria-activedescendant') ?? '')?.firstChild?.textContent;

  it('shows a task that waits for this one, directly or through another, disabled with the reason; the keys and a click pass over it', () => {
    const task = makeTask({ id: 't_10aa10aa10aa10aa', title: 'Greet' });
    const direct = makeTask({ id: 't_11bb11bb11bb11bb', title: 'Schema', deps: [task.id] });
    const through = makeTask({ id: 't_12cc12cc12cc12cc', title: 'Schema docs', deps: [direct.id] });
    const docs = makeTask({ id: 't_13dd13dd13dd13dd', title: 'Add a schema' });
    // Waits for a task the board has not loaded: offered (the daemon alone sees past it).
    const lint = makeTask({ id: 't_14ee14ee14ee14ee', title: 'Schema lint', deps: ['t_99ff99ff99ff99ff'] });
    board(task, direct, through, docs, lint);
    const box = openForm(task);

    type(box, 'schema');
    expect(offered()).toEqual(['Schema lint', 'Add a schema', 'Schema', 'Schema docs']);
    expect(disabled()).toEqual(['Schema', 'Schema docs']);
    const option = screen.getByRole('option', { name: 'Schema t_11bb11bb ready depends on this task' });
    expect(option.getAttribute('aria-disabled')).toBe('true');
    expect(screen.getByRole('option', { name: 'Schema lint t_14ee14ee ready' }).getAttribute('aria-disabled')).toBeNull();

    // ArrowDown stops at the last task that may be picked; ArrowUp from the first leaves the list's options.
    key(box, 'ArrowDown');
    expect(active(box)).toBe('Schema lint');
    for (let i = 0; i < 4; i++) key(box, 'ArrowDown');
    expect(active(box)).toBe('Add a schema');
    key(box, 'ArrowUp');
    key(box, 'ArrowUp');
    expect(box.getAttribute('aria-activedescendant')).toBeNull();

    // A click on it adds nothing and keeps the list and the keyboard.
    expect(fireEvent.mouseDown(option)).toBe(false);
    fireEvent.click(option);
    expect(screen.queryByRole('button', { name: /^Remove the dependency on/ })).toBeNull();
    expect(offered()).toHaveLength(4);

    // Its id pasted: it alone matches, and Enter still does not add it.
    type(box, through.id);
    expect(offered()).toEqual(['Schema docs']);
    expect(screen.getByRole('option', { name: 'Schema docs t_12cc12cc ready depends on this task' })).toBeTruthy();
    key(box, 'ArrowDown');
    expect(box.getAttribute('aria-activedescendant')).toBeNull();
    key(box, 'Enter');
    expect(screen.queryByRole('button', { name: /^Remove the dependency on/ })).toBeNull();
    expect(box.value).toBe(through.id);
  });

  it('takes a task that waits for one the form has just added, refuses one that waits for the task, and follows the board as it changes', async () => {
    const task = makeTask({ id: 't_20aa20aa20aa20aa', title: 'Greet' });
    const schema = makeTask({ id: 't_21bb21bb21bb21bb', title: 'Schema' });
    const wire = makeTask({ id: 't_22cc22cc22cc22cc', title: 'Wire', deps: [schema.id] });
    const wave = makeTask({ id: 't_23dd23dd23dd23dd', title: 'Wave', deps: [task.id] });
    board(task, schema, wire, wave);
    const sent = serve(task);
    const box = openForm(task);

    type(box, 'schema');
    key(box, 'Enter');
    // Wire waits for Schema, which the form has just added: the task may wait for both.
    type(box, 'w');
    expect(offered()).toEqual(['Wire', 'Wave']);
    expect(disabled()).toEqual(['Wave']);
    key(box, 'ArrowDown');
    key(box, 'ArrowDown');
    expect(active(box)).toBe('Wire');
    key(box, 'Enter');
    expect(screen.getByRole('button', { name: 'Remove the dependency on Wire' })).toBeTruthy();

    // Someone makes Wave wait for nothing: it may be picked; then for the task again, under the keys.
    type(box, 'wave');
    key(box, 'ArrowDown');
    expect(box.getAttribute('aria-activedescendant')).toBeNull();
    act(() => board(task, schema, wire, { ...wave, deps: [] }));
    expect(disabled()).toEqual([]);
    key(box, 'ArrowDown');
    expect(active(box)).toBe('Wave');
    // It is no longer the active one, and Enter adds nothing.
    act(() => board(task, schema, wire, wave));
    expect(disabled()).toEqual(['Wave']);
    expect(box.getAttribute('aria-activedescendant')).toBeNull();
    key(box, 'Enter');
    expect(screen.queryByRole('button', { name: 'Remove the dependency on Wave' })).toBeNull();

    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await screen.findByText('Saved: Depends on.');
    expect(sent).toEqual([{ deps: [schema.id, wire.id] }]);
  });

  it('moves up past the options that came to wait for the task while the list was open', () => {
    const task = makeTask({ title: 'Greet' });
    const alpha = makeTask({ title: 'Alpha' });
    const beta = makeTask({ title: 'Beta' });
    const gamma = makeTask({ title: 'Gamma' });
    board(task, alpha, beta, gamma);
    const box = openForm(task);

    key(box, 'ArrowDown');
    key(box, 'ArrowDown');
    key(box, 'ArrowDown');
    expect(active(box)).toBe('Gamma');
    act(() => board(task, alpha, { ...beta, deps: [task.id] }, { ...gamma, deps: [beta.id] }));
    expect(disabled()).toEqual(['Beta', 'Gamma']);
    expect(box.getAttribute('aria-activedescendant')).toBeNull();
    key(box, 'ArrowUp');
    expect(active(box)).toBe('Alpha');
  });
});
