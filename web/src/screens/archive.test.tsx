import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Project } from '../api/types.js';
import { Sidebar } from '../components/Sidebar.js';
import { useProjects } from '../stores/projects.js';
import { SettingsScreen } from './SettingsScreen.js';

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const project = (id: string, name: string, archivedAt: number | null = null): Project => ({ id, name, repoPath: `/repos/${name}`, config: {}, createdAt: 1, updatedAt: 1, archivedAt });

/** Answers `POST <path>` with `answer`; every request is kept in `sent`. */
function serve(answers: Record<string, { status: number; json: unknown }>, sent: Array<{ url: string; body: unknown }>) {
  vi.stubGlobal('fetch', async (url: string, init?: RequestInit) => {
    sent.push({ url, body: init?.body ? JSON.parse(String(init.body)) : undefined });
    const a = answers[`${init?.method ?? 'GET'} ${url.split('?')[0]}`];
    return new Response(JSON.stringify(a?.json ?? { error: { code: 'NOT_FOUND', message: 'no route' } }), { status: a?.status ?? 404 });
  });
}

describe('archiving a project on the board', () => {
  it('archives from Settings, says it is archived, and restores; a refusal shows what the daemon said', async () => {
    useProjects.setState({ projects: [project('p1', 'shop')], selectedId: 'p1', loaded: true, error: null });
    const sent: Array<{ url: string; body: unknown }> = [];
    serve({ 'POST /api/projects/p1/archive': { status: 409, json: { error: { code: 'PROJECT_BUSY', message: 'Project shop has work in flight or waiting at a gate: t_1 (executing).' } } } }, sent);
    render(<SettingsScreen />);
    fireEvent.click(screen.getByRole('button', { name: 'Archive project' }));
    expect((await screen.findByText('Project shop has work in flight or waiting at a gate: t_1 (executing).')).getAttribute('role')).toBe('alert');
    expect(useProjects.getState().projects[0]!.archivedAt).toBeNull();

    serve({ 'POST /api/projects/p1/archive': { status: 200, json: { project: project('p1', 'shop', Date.UTC(2026, 11, 2)) } } }, sent);
    fireEvent.click(screen.getByRole('button', { name: 'Archive project' }));
    expect((await screen.findByText('Archived.')).getAttribute('role')).toBe('status');
    expect(screen.getByText(/^Archived .*: no new work until it is restored\.$/)).toBeTruthy();
    expect(sent.at(-1)).toEqual({ url: '/api/projects/p1/archive', body: { who: 'web' } });

    serve({ 'POST /api/projects/p1/restore': { status: 200, json: { project: project('p1', 'shop') } } }, sent);
    fireEvent.click(screen.getByRole('button', { name: 'Restore project' }));
    expect((await screen.findByText('Restored.')).getAttribute('role')).toBe('status');
    expect(screen.getByRole('button', { name: 'Archive project' })).toBeTruthy();
  });

  it('lists archived projects apart in the sidebar, and picks an active one by default', async () => {
    const sent: Array<{ url: string; body: unknown }> = [];
    serve({ 'GET /api/projects': { status: 200, json: { projects: [project('p0', 'old', 5), project('p1', 'shop')] } } }, sent);
    useProjects.setState({ projects: [], selectedId: null, loaded: false });
    await useProjects.getState().load();
    expect(useProjects.getState().selectedId).toBe('p1');
    render(<Sidebar />);
    const active = screen.getByRole('list', { name: 'Projects' });
    expect(within(active).getAllByRole('button').map((b) => b.textContent)).toEqual(['shop']);
    const archived = screen.getByRole('list', { name: 'Archived (1)' });
    expect(within(archived).getAllByRole('button').map((b) => b.textContent)).toEqual(['old']);
  });
});
