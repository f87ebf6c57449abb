import { render, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { makeTask } from '../../testData.js';
import { PlanSection } from './PlanSection.js';

const rows = (table: HTMLElement) => within(table).getAllByRole('row').slice(1).map((r) => within(r).getAllByRole('cell').map((c) => c.textContent));

describe('PlanSection at plan_review', () => {
  it('shows the proposed subtasks as a table: dependencies, owned files, complexity', () => {
    const task = makeTask({
      status: 'plan_review',
      plan: 'Two steps.\n\n| # | title |\n| --- | --- |\n| 0 | Rewritten by a hook |',
      result: {
        kind: 'plan', plan: 'Two steps.',
        subtasks: [
          { title: 'Define the API', complexity: 'easy', priority: 0, deps: [], ownedFiles: ['src/api.ts'], expectedOutput: 'an interface' },
          { title: 'Implement it', complexity: 'hard', priority: 1, deps: [0], ownedFiles: ['src/impl.ts', 'src/impl.test.ts'], expectedOutput: null },
        ],
      },
    });
    render(<PlanSection task={task} children={[]} />);
    const table = screen.getByRole('table', { name: 'Proposed subtasks' });
    expect(within(table).getAllByRole('columnheader').map((h) => h.textContent)).toEqual(['#', 'Title', 'Priority', 'Complexity', 'Depends on', 'Owned files']);
    // The daemon's parsed list wins over the text (a hook may have rewritten the markdown).
    expect(rows(table)).toEqual([
      ['0', 'Define the API', 'P0', 'easy', '—', 'src/api.ts'],
      ['1', 'Implement it', 'P1', 'hard', 'Define the API', 'src/impl.ts, src/impl.test.ts'],
    ]);
    expect(screen.getByTestId('plan-text').textContent).toContain('Two steps.');
  });

  it('after approval lists the child tasks with their owned files', () => {
    const parent = makeTask({ status: 'waiting_children', plan: 'Plan' });
    const a = makeTask({ parentId: parent.id, title: 'A', ownedFiles: ['a.ts'], complexity: 'easy', status: 'done' });
    const b = makeTask({ parentId: parent.id, title: 'B', deps: [a.id], priority: 2 });
    render(<PlanSection task={parent} children={[a, b]} />);
    expect(rows(screen.getByRole('table', { name: 'Subtasks' }))).toEqual([
      ['A', 'done', 'P1', 'easy', '—', 'a.ts'],
      ['B', 'ready', 'P2', 'medium', 'A', '—'],
    ]);
  });

  it("shows the hidden characters of the child tasks' dependencies and owned files, and a line break in a file name", () => {
    const parent = makeTask({ status: 'waiting_children', plan: 'Plan' });
    const a = makeTask({ parentId: parent.id, title: 'Fix \u202eloop', ownedFiles: ['src/a\u2066.ts', 'docs.md\nb.ts'] });
    const b = makeTask({ parentId: parent.id, title: 'B', deps: [a.id] });
    render(<PlanSection task={parent} children={[a, b]} />);
    const [first, second] = rows(screen.getByRole('table', { name: 'Subtasks' }));
    expect(first![5]).toBe('src/a\\u{2066}.ts, docs.md\\u{a}b.ts');
    expect(second![4]).toBe('Fix \\u{202e}loop');
  });

  it('draws characters that hide or reorder text as \\u{…} in the plan a person approves', () => {
    const task = makeTask({
      status: 'plan_review',
      plan: 'Harden auth\u200b.\n\n```json\n{"subtasks":[{"title":"Fix \u202eloop","ownedFiles":["src/a\u2066.ts"],"deps":[]}]}\n```',
    });
    render(<PlanSection task={task} children={[]} />);
    expect(screen.getByTestId('plan-text').textContent).toContain('Harden auth\\u{200b}.');
    expect(rows(screen.getByRole('table', { name: 'Proposed subtasks' }))[0]).toEqual(['0', 'Fix \\u{202e}loop', '—', '—', '—', 'src/a\\u{2066}.ts']);
  });
});
