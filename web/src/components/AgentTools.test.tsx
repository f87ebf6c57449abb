import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AgentTools } from './AgentTools.js';

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

function answer(status: number, json: unknown) {
  vi.stubGlobal('fetch', async (url: string) => {
    expect(url.split('?')[0]).toMatch(/\/api\/agents$/);
    return new Response(JSON.stringify(json), { status });
  });
}

describe('AgentTools', () => {
  it('lists each tool as installed or not, and logged in or not, with how that was told', async () => {
    answer(200, {
      agents: [
        { kind: 'claude', name: 'Claude Code', executable: 'claude', path: null, installed: true, loggedIn: true, detail: 'ANTHROPIC_API_KEY is set' },
        { kind: 'codex', name: 'Codex CLI', executable: 'codex', path: '/usr/bin/codex', installed: true, loggedIn: false, detail: 'no login found: run `codex login`' },
        { kind: 'gemini', name: 'Gemini CLI', executable: 'gemini', path: null, installed: false, loggedIn: null, detail: 'not installed (no gemini on PATH)' },
      ],
    });
    render(<AgentTools />);
    const codex = await screen.findByText('Codex CLI');
    expect(codex.closest('li')!.textContent).toBe('Codex CLI (codex): installed, not logged inno login found: run `codex login`');
    expect(screen.getByText('Claude Code').closest('li')!.textContent).toContain('installed, logged in');
    expect(screen.getByText('Gemini CLI').closest('li')!.textContent).toBe('Gemini CLI (gemini): not installednot installed (no gemini on PATH)');
  });

  it('says so when the daemon cannot be asked', async () => {
    answer(500, { error: { code: 'INTERNAL', message: 'boom' } });
    render(<AgentTools />);
    expect((await screen.findByRole('alert')).textContent).toMatch(/^The agent tools could not be checked: /);
  });
});
