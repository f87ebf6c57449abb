import { act, fireEvent, render, screen, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import i18n from '../i18n/index.js';
import { makeTask } from '../testData.js';
import { Board, LANE_PAGE } from './Board.js';

describe('Board', () => {
  it('puts tasks in lanes by status with counts, and opens one on click', () => {
    const onOpen = vi.fn();
    const a = makeTask({ title: 'Write the parser', status: 'ready' });
    const b = makeTask({ title: 'Review the plan', status: 'plan_review' });
    const c = makeTask({ title: 'Ship it', status: 'done' });
    render(<Board tasks={[a, b, c]} onOpen={onOpen} />);
    const planning = screen.getByRole('region', { name: /Planning/ });
    expect(within(planning).getByText('Review the plan')).toBeTruthy();
    expect(within(planning).getByText('plan review 1')).toBeTruthy();
    expect(within(screen.getByRole('region', { name: /Done/ })).getByText('Ship it')).toBeTruthy();
    fireEvent.click(screen.getByText('Write the parser'));
    expect(onOpen).toHaveBeenCalledWith(a.id);
  });

  it('says on a card in merging that its merge check runs, with its round, or with no run yet why: starting, waiting for a worker, its daemon gone', () => {
    const check = (title: string, state: 'running' | 'starting' | 'waiting' | 'ownerGone', round = 1) => ({ ...makeTask({ title, status: 'merging' }), mergeCheck: { round, maxRounds: 3, state } });
    render(<Board tasks={[check('Checked', 'running', 2), check('Starts', 'starting'), check('Waits', 'waiting'), check('Left', 'ownerGone')]} onOpen={() => {}} />);
    expect(screen.getByText('checking merge, round 2 of 3')).toBeTruthy();
    expect(screen.getByText('merge check starting')).toBeTruthy();
    expect(screen.getByText('merge check left by a stopped daemon')).toBeTruthy();
    // Only the one whose daemon found every run slot taken says it waits for a worker.
    expect(screen.getAllByText('merge check waiting for a worker')).toHaveLength(1);
  });

  it.each(['zh', 'es', 'ja', 'fr'])('says each state of a merge check with no run in %s, each its own words', async (lang) => {
    await i18n.changeLanguage(lang);
    try {
      const check = (title: string, state: 'starting' | 'waiting' | 'ownerGone') => ({ ...makeTask({ title, status: 'merging' }), mergeCheck: { round: 1, maxRounds: 3, state } });
      render(<Board tasks={[check('Starts', 'starting'), check('Waits', 'waiting'), check('Left', 'ownerGone')]} onOpen={() => {}} />);
      const keys = ['checkingMergeStarting', 'checkingMergeWaiting', 'checkingMergeOwnerGone'].map((k) => `board.${k}`);
      expect(new Set(keys.map((k) => i18n.t(k))).size).toBe(3);
      for (const k of keys) {
        expect(i18n.t(k)).not.toBe(i18n.t(k, { lng: 'en' }));
        expect(screen.getByText(i18n.t(k))).toBeTruthy();
      }
    } finally {
      await i18n.changeLanguage('en');
    }
  });

  it('filters by text and by status', () => {
    const tasks = [makeTask({ title: 'alpha one' }), makeTask({ title: 'beta two', status: 'executing' }), makeTask({ title: 'alpha three', status: 'done' })];
    render(<Board tasks={tasks} onOpen={() => {}} />);
    fireEvent.change(screen.getByLabelText('Search titles'), { target: { value: 'ALPHA' } });
    expect(screen.queryByText('beta two')).toBeNull();
    expect(screen.getByText('alpha one')).toBeTruthy();
    fireEvent.change(screen.getByLabelText('Filter by status'), { target: { value: 'done' } });
    expect(screen.queryByText('alpha one')).toBeNull();
    expect(screen.getByText('alpha three')).toBeTruthy();
  });

  it('counts its tasks in the singular for one ("1 task", not "1 tasks")', () => {
    const { rerender } = render(<Board tasks={[makeTask({ title: 'only' })]} onOpen={() => {}} />);
    expect(screen.getByText('1 task')).toBeTruthy();
    rerender(<Board tasks={[makeTask({ title: 'one' }), makeTask({ title: 'two' })]} onOpen={() => {}} />);
    expect(screen.getByText('2 tasks')).toBeTruthy();
  });

  it("spells out a card title's hidden characters (a right-to-left override reorders what it shows)", () => {
    render(<Board tasks={[makeTask({ title: 'escape gnp.exe\u202e' })]} onOpen={() => {}} />);
    expect(screen.getByText('escape gnp.exe\\u{202e}')).toBeTruthy();
  });

  it('renders hostile titles as text', () => {
    const title = '<img src=x onerror="alert(1)"><b>bold</b>';
    const { container } = render(<Board tasks={[makeTask({ title })]} onOpen={() => {}} />);
    expect(screen.getByText(title)).toBeTruthy();
    expect(container.querySelector('img')).toBeNull();
    expect(container.querySelector('b')).toBeNull();
  });

  it('moves focus between cards with the arrow keys', () => {
    const a = makeTask({ title: 'first', priority: 0 });
    const b = makeTask({ title: 'second', priority: 1 });
    const c = makeTask({ title: 'working', status: 'executing' });
    render(<Board tasks={[a, b, c]} onOpen={() => {}} />);
    const first = screen.getByText('first').closest('button')!;
    first.focus();
    fireEvent.keyDown(first, { key: 'ArrowDown' });
    expect(document.activeElement).toBe(screen.getByText('second').closest('button'));
    fireEvent.keyDown(document.activeElement!, { key: 'ArrowRight' });
    // The Planning lane next door has no card: focus stays where it is.
    expect(document.activeElement).toBe(screen.getByText('second').closest('button'));
    fireEvent.keyDown(document.activeElement!, { key: 'ArrowUp' });
    expect(document.activeElement).toBe(first);
  });

  it('shows a page of each lane and the rest on request', () => {
    const tasks = Array.from({ length: LANE_PAGE + 7 }, () => makeTask());
    const { container } = render(<Board tasks={tasks} onOpen={() => {}} />);
    expect(container.querySelectorAll('[data-card]').length).toBe(LANE_PAGE);
    fireEvent.click(screen.getByText('Show 7 more'));
    expect(container.querySelectorAll('[data-card]').length).toBe(LANE_PAGE + 7);
    expect(screen.getByTestId('task-count').textContent).toBe(`${LANE_PAGE + 7} tasks`);
  });

  it('names a subtask\'s parent on its card, and the name opens the parent', () => {
    const onOpen = vi.fn();
    const parent = makeTask({ title: 'Add a greeting', status: 'waiting_children' });
    const child = makeTask({ title: 'Define the greeting', parentId: parent.id, status: 'executing' });
    render(<Board tasks={[parent, child]} onOpen={onOpen} />);
    const card = screen.getByText('Define the greeting').closest('li')!;
    const link = within(card).getByRole('button', { name: 'subtask of Add a greeting' });
    // Its own button, not one inside the card's: a button may not hold another.
    expect(link.closest('[data-card]')).toBeNull();
    fireEvent.click(link);
    expect(onOpen).toHaveBeenCalledTimes(1);
    expect(onOpen).toHaveBeenCalledWith(parent.id);
    // The parent's own card names no parent.
    expect(within(screen.getByText('Add a greeting').closest('li')!).getAllByRole('button')).toHaveLength(1);
  });

  it('counts a parent\'s subtasks done on its card, live, leaving out superseded versions', () => {
    const parent = makeTask({ title: 'Add a greeting', status: 'waiting_children' });
    const kids = [
      makeTask({ parentId: parent.id, status: 'done' }),
      makeTask({ parentId: parent.id, status: 'executing' }),
      makeTask({ parentId: parent.id, status: 'superseded' }),
    ];
    const { rerender } = render(<Board tasks={[parent, ...kids]} onOpen={() => {}} />);
    const card = () => screen.getByText('Add a greeting').closest('button')!;
    expect(within(card()).getByText('1 of 2 subtasks done')).toBeTruthy();
    rerender(<Board tasks={[parent, kids[0]!, { ...kids[1]!, status: 'done' }, kids[2]!]} onOpen={() => {}} />);
    expect(within(card()).getByText('2 of 2 subtasks done')).toBeTruthy();
    // A task without subtasks says nothing of them.
    expect(screen.queryAllByTestId('subtask-progress')).toHaveLength(1);
  });

  it('shows hidden characters in a parent\'s title, and names a parent not on the board by id', () => {
    const parent = makeTask({ title: 'safe\u202eevil' });
    render(<Board tasks={[parent, makeTask({ parentId: parent.id }), makeTask({ parentId: 't_gone' })]} onOpen={() => {}} />);
    expect(screen.getByRole('button', { name: 'subtask of safe\\u{202e}evil' })).toBeTruthy();
    expect(screen.getByRole('button', { name: 'subtask of #t_gone' })).toBeTruthy();
  });

  it('says the family in the board\'s language', async () => {
    const parent = makeTask({ title: 'Add a greeting' });
    render(<Board tasks={[parent, makeTask({ parentId: parent.id, status: 'done' })]} onOpen={() => {}} />);
    await act(() => i18n.changeLanguage('ja'));
    expect(screen.getByRole('button', { name: '親タスク: Add a greeting' })).toBeTruthy();
    expect(screen.getByText('サブタスク 1 件中 1 件完了')).toBeTruthy();
  });
});
