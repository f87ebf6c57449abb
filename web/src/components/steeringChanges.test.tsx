import { cleanup, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { MaestroEvent } from '../api/types.js';
import { SteeringChanges } from './SteeringChanges.js';

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const event = (id: number, payload: Record<string, unknown>): MaestroEvent => ({ id, projectId: 'p1', taskId: null, runId: null, traceId: null, type: 'project.settings_files', payload, at: Date.UTC(2026, 11, 3, 10, id) }) as MaestroEvent;

/** Answers GET /api/events with `answer` (or fails with `status`); the URLs asked are kept. */
function serve(answer: unknown, status = 200): string[] {
  const asked: string[] = [];
  vi.stubGlobal('fetch', async (url: string) => {
    asked.push(url);
    return new Response(JSON.stringify(answer), { status });
  });
  return asked;
}

describe('changes to what runs use, on the settings screen', () => {
  it('lists merged, pushed and promoted changes newest first, with their files and commits', async () => {
    const asked = serve({
      // Newest first, as asked (order=newest).
      events: [
        event(4, { files: 'not a list', sha: 42 }),
        event(3, { files: ['.workflow/knowhow/retry.md'], who: 'a knowledge promotion from session S1', sha: 'c'.repeat(40), promotion: true }),
        event(2, { files: ['.maestro/config.json', '.workflow/specs/api.md'], who: 'Eve <eve@example.com>', subject: 'loosen the checks', sha: 'b'.repeat(40), remote: true }),
        event(1, { files: ['.maestro/hooks/before-merge.sh'], who: 'the agent of task t_1 (add a hook)', from: 'merge of maestro/t_1-v1', sha: 'a'.repeat(40) }),
      ],
      nextAfter: null,
      nextBefore: 1,
    });
    render(<SteeringChanges projectId="p1" baseBranch="trunk" />);
    const items = await within(screen.getByTestId('steering-changes')).findAllByRole('listitem');
    expect(asked[0]).toMatch(/^\/api\/events\?/);
    expect(asked[0]).toContain('projectId=p1');
    expect(asked[0]).toContain('type=project.settings_files');
    // The newest changes, however many the project has had: not its first thousand.
    expect(asked[0]).toContain('order=newest');
    expect(asked[0]).toContain('limit=20');
    expect(items.map((li) => li.getAttribute('data-kind'))).toEqual(['merged', 'promotion', 'remote', 'merged']);
    // The project's base branch, not main, is where they changed.
    expect(screen.getByText(/changed on trunk: every run from then on uses them/)).toBeTruthy();
    expect(items[0]!.textContent).toContain('(files not named)');
    expect(items[1]!.textContent).toContain('Knowledge promoted into trunk (a knowledge promotion from session S1)');
    expect(items[1]!.textContent).toContain(`commit ${'c'.repeat(12)}`);
    expect(items[2]!.textContent).toContain('Pushed to the shared trunk without a Maestro merge by Eve <eve@example.com>: “loosen the checks”');
    expect(items[2]!.textContent).toContain('.maestro/config.json');
    expect(items[2]!.textContent).toContain('.workflow/specs/api.md');
    expect(items[3]!.textContent).toContain('Merged from the agent of task t_1 (add a hook)');
    expect(items[3]!.textContent).toContain('.maestro/hooks/before-merge.sh');
  });

  it('says when nothing has changed yet, and what went wrong when the events cannot be read', async () => {
    serve({ events: [], nextAfter: null, nextBefore: null });
    const { unmount } = render(<SteeringChanges projectId="p1" baseBranch="main" />);
    expect(await screen.findByText('No change to hooks, checks or knowledge has reached main yet.')).toBeTruthy();
    unmount();
    serve({ error: { code: 'INTERNAL', message: 'the store is closed' } }, 500);
    render(<SteeringChanges projectId="p1" baseBranch="main" />);
    expect((await screen.findByRole('alert')).textContent).toContain('the store is closed');
  });
});
