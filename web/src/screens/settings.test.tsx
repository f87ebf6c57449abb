import { act, cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Project } from '../api/types.js';
import { useProjects } from '../stores/projects.js';
import { SettingsScreen } from './SettingsScreen.js';

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const project: Project = { id: 'p1', name: 'shop', repoPath: '/repos/shop', config: {}, createdAt: 1, updatedAt: 1, archivedAt: null };

function serveDetail(repository: unknown) {
  vi.stubGlobal('fetch', async (url: string) =>
    url.split('?')[0] === '/api/projects/p1'
      ? new Response(JSON.stringify({ project, tasksByStatus: {}, repository }), { status: 200 })
      : new Response(JSON.stringify({ error: { code: 'NOT_FOUND', message: 'no route' } }), { status: 404 }),
  );
}

const card = (title: string) => screen.getByRole('heading', { name: title }).parentElement!;

describe('project settings on the board', () => {
  it("shows the checks, limits and tiers the repository's .maestro/config.json sets, which the daemon does not store", async () => {
    useProjects.setState({ projects: [project], selectedId: 'p1', loaded: true, error: null });
    serveDetail({ file: '.maestro/config.json', hooks: ['.maestro/hooks/before-execute.sh'], checks: [{ name: 'import', command: ['node', '-e', '1'] }], limits: { maxDiffFiles: 7 }, models: {}, problem: null });
    render(<SettingsScreen />);
    await screen.findAllByText('From the repository’s .maestro/config.json:', {}, { timeout: 5000 });
    const checks = card('Checks');
    expect(within(checks).getByText('From the repository’s .maestro/config.json:')).toBeTruthy();
    expect(within(checks).getByText(/"name": "import"/)).toBeTruthy();
    expect(within(checks).queryByText('Not set (defaults apply).')).toBeNull();
    expect(within(card('Limits')).getByText(/"maxDiffFiles": 7/)).toBeTruthy();
    expect(within(card('Hooks')).getByText('From the repository’s .maestro/:')).toBeTruthy();
    expect(within(card('Hooks')).getByText(/before-execute\.sh/)).toBeTruthy();
    // Set nowhere: not set.
    expect(within(card('Model tiers')).getByText('Not set (defaults apply).')).toBeTruthy();
  });

  it("names the project's base branch where the changes to what runs use reached it", async () => {
    useProjects.setState({ projects: [{ ...project, config: { baseBranch: 'develop' } }], selectedId: 'p1', loaded: true, error: null });
    serveDetail(null);
    render(<SettingsScreen />);
    expect(within(screen.getByTestId('steering-changes')).getByText(/changed on develop: every run from then on uses them/)).toBeTruthy();
  });

  it("says why the repository's settings could not be read", async () => {
    useProjects.setState({ projects: [project], selectedId: 'p1', loaded: true, error: null });
    serveDetail({ file: null, hooks: [], checks: [], limits: {}, models: {}, problem: '/repos/shop/.maestro/config.json is not valid JSON (line 1, column 9).' });
    render(<SettingsScreen />);
    const alert = await screen.findByText('The repository’s settings could not be read: /repos/shop/.maestro/config.json is not valid JSON (line 1, column 9).', {}, { timeout: 5000 });
    expect(alert.getAttribute('role')).toBe('alert');
    expect(within(card('Checks')).getByText('Not set (defaults apply).')).toBeTruthy();
  });

  it('says what saving auto-approval means for the tasks at a gate, as the CLI does, and that it is on while it is', async () => {
    useProjects.setState({ projects: [project], selectedId: 'p1', loaded: true, error: null });
    const sent: unknown[] = [];
    let answer: unknown = null;
    vi.stubGlobal('fetch', async (url: string, init?: RequestInit) => {
      if (init?.method === 'PATCH') {
        sent.push(JSON.parse(String(init.body)));
        return new Response(JSON.stringify(answer), { status: 200 });
      }
      return new Response(JSON.stringify({ error: { code: 'NOT_FOUND', message: 'no route' } }), { status: 404 });
    });
    render(<SettingsScreen />);
    const save = async (config: Record<string, unknown>, autoApproval: unknown, cannotRun: string | null = null) => {
      answer = { project: { ...project, config }, autoApproval, cannotRun };
      fireEvent.change(screen.getByLabelText('Configuration (JSON)'), { target: { value: JSON.stringify(config) } });
      fireEvent.click(screen.getByRole('button', { name: 'Save' }));
      return (await screen.findByRole('status')).textContent;
    };
    expect(await save({ autoApproveAfterMs: 0 }, { afterMs: 0, previousMs: null, waiting: 2 }))
      .toBe('Saved. Tasks reaching a gate from now on are approved after 0 ms without a person; the tasks already waiting (2) still wait for you.');
    // Sent with the settings it was made from, as shown: changed since, the daemon saves nothing (SETTINGS_CHANGED).
    expect(sent).toEqual([{ config: { autoApproveAfterMs: 0 }, basedOn: project.config }]);
    expect(screen.getByText(/^Gates approve themselves: a task that reaches a gate is approved after 0 ms without a person \(autoApproveAfterMs\)\./)).toBeTruthy();
    expect(await save({ autoApproveAfterMs: 5000 }, { afterMs: 5000, previousMs: 0, waiting: 1 }))
      .toBe('Saved. Tasks at a gate are approved after 5000 ms without a person (it was 0 ms); the tasks waiting since before it was switched on (1) still wait for you.');
    expect(await save({}, { afterMs: null, previousMs: 5000, waiting: 1 })).toBe('Saved. Every gate waits for a person again.');
    expect(screen.queryByText(/^Gates approve themselves/)).toBeNull();
    expect(await save({ keepBranches: true }, null)).toBe('Saved.');
    // Saved, with why no task can run with it: an alert.
    answer = { project: { ...project, config: { provider: { kind: 'scripted', script: '/repos/shop/gone.yaml' } } }, autoApproval: null, cannotRun: 'Project shop cannot run tasks: its agent script /repos/shop/gone.yaml does not exist.' };
    fireEvent.change(screen.getByLabelText('Configuration (JSON)'), { target: { value: '{"provider": {"kind": "scripted", "script": "/repos/shop/gone.yaml"}}' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    const said = await screen.findByText('Saved. Project shop cannot run tasks: its agent script /repos/shop/gone.yaml does not exist.');
    expect(said.getAttribute('role')).toBe('alert');
  });
});

describe('saving the configuration', () => {
  it("keeps 'Saved.' on screen after the saved project replaces the one shown (it was cleared as soon as it was drawn)", async () => {
    useProjects.setState({ projects: [project], selectedId: 'p1', loaded: true, error: null });
    vi.stubGlobal('fetch', async (url: string, init?: RequestInit) =>
      init?.method === 'PATCH'
        ? new Response(JSON.stringify({ project: { ...project, config: { keepBranches: true }, updatedAt: 2 }, autoApproval: null, cannotRun: null }), { status: 200 })
        : new Response(JSON.stringify({ error: { code: 'NOT_FOUND', message: 'no route' } }), { status: 404 }),
    );
    render(<SettingsScreen />);
    fireEvent.change(screen.getByLabelText('Configuration (JSON)'), { target: { value: '{"keepBranches": true}' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await screen.findByText('Saved.');
    // Let React run the effects of the render that drew it.
    await act(async () => {});
    expect(screen.queryByText('Saved.')).not.toBeNull();
    // The box shows what is stored now.
    expect(JSON.parse((screen.getByLabelText('Configuration (JSON)') as HTMLTextAreaElement).value)).toEqual({ keepBranches: true });
    // Another project: its own configuration, no note about the last one.
    const other: Project = { ...project, id: 'p2', name: 'shed', config: { demo: true } };
    act(() => useProjects.setState({ projects: [project, other], selectedId: 'p2' }));
    expect(screen.queryByText('Saved.')).toBeNull();
    expect(JSON.parse((screen.getByLabelText('Configuration (JSON)') as HTMLTextAreaElement).value)).toEqual({ demo: true });
  });
});
