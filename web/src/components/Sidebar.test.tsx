import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { useProjects } from '../stores/projects.js';
import { Sidebar } from './Sidebar.js';

describe('Sidebar', () => {
  it("spells out a project name's hidden characters: a right-to-left override must not make 'x\\u202eder' read 'xred'", () => {
    const project = { id: 'p_1', name: 'x\u202eder', repoPath: '/repo', config: {}, createdAt: 0, updatedAt: 0, archivedAt: null };
    useProjects.setState({ projects: [project], selectedId: 'p_1', error: null, loaded: true });
    render(<Sidebar />);
    const button = screen.getByRole('button', { pressed: true });
    expect(button.textContent).toBe('x\\u{202e}der');
  });
});
