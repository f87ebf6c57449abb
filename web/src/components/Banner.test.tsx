import { act, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { setLanguage } from '../i18n/index.js';
import { useHealth } from '../stores/health.js';
import { Banner } from './Banner.js';

const DISK_FULL = { code: 'DISK_FULL', path: '/home/me/.maestro', message: 'No space left on the disk holding /home/me/.maestro: …', since: 1 };

function healthEvent(conditions: unknown[]) {
  return { id: 0, projectId: null, taskId: null, runId: null, traceId: null, type: 'daemon.health', payload: { ok: conditions.length === 0, conditions }, at: 2 };
}

describe('Banner', () => {
  afterEach(() => {
    useHealth.setState({ conditions: [], agentSandbox: null });
    vi.unstubAllGlobals();
  });

  it('says the disk is full from /api/health, in the chosen language, and clears when the feed says space is back', async () => {
    vi.stubGlobal('fetch', async (url: string) => new Response(JSON.stringify(url === '/api/health' ? { ok: false, conditions: [DISK_FULL] } : {})));
    render(<Banner />);
    await act(() => useHealth.getState().load());
    expect(screen.getByRole('alert').textContent).toBe('The disk holding /home/me/.maestro is full: no new tasks start until space is freed.');
    act(() => setLanguage('fr'));
    expect(await screen.findByText(/Le disque de \/home\/me\/\.maestro est plein/)).toBeTruthy();
    act(() => void useHealth.getState().apply(healthEvent([])));
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('shows a read-only home from a feed event, and ignores other events', () => {
    render(<Banner />);
    expect(useHealth.getState().apply({ ...healthEvent([]), type: 'task.status' } as never)).toBe(false);
    act(() => void useHealth.getState().apply(healthEvent([{ code: 'HOME_READ_ONLY', path: '/srv/m', message: '/srv/m is read-only', since: 1 }]) as never));
    expect(screen.getByRole('alert').textContent).toBe('/srv/m is read-only: no new tasks start until it is writable again.');
  });

  it('warns when agents run unsandboxed though nobody chose it, with the reason in the tooltip; says so quietly in the sandbox', async () => {
    const reason = 'bwrap is not installed (not found on PATH). Install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap); or set agentSandbox to "off" if agents are meant to run as you';
    let answer: object = { ok: true, conditions: [], agentSandbox: { kind: 'off', reason, unintended: true } };
    vi.stubGlobal('fetch', async (url: string) => new Response(JSON.stringify(url === '/api/health' ? answer : {})));
    render(<Banner />);
    expect(screen.queryByTestId('agent-sandbox')).toBeNull();
    await act(() => useHealth.getState().load());
    const off = screen.getByTestId('agent-sandbox');
    expect(off.textContent).toBe('Agents run unsandboxed');
    expect(off.getAttribute('title')).toBe(`Agents and checks run as the user who started the daemon: ${reason}`);
    expect(off.className).toMatch(/bad/);
    answer = { ok: true, conditions: [], agentSandbox: { kind: 'bwrap', reason: null, unintended: false } };
    await act(() => useHealth.getState().load());
    expect(screen.getByTestId('agent-sandbox').textContent).toBe('Agents sandboxed');
    expect(screen.getByTestId('agent-sandbox').className).not.toMatch(/bad/);
    // In the sandbox on a kernel that cannot scope abstract sockets: said, with why, in the tooltip.
    answer = { ok: true, conditions: [], agentSandbox: { kind: 'bwrap', reason: null, unintended: false, sockets: 'this kernel cannot scope them with Landlock (Linux 6.12 or later can): EINVAL' } };
    await act(() => useHealth.getState().load());
    expect(screen.getByTestId('agent-sandbox').textContent).toBe('Agents sandboxed (!)');
    expect(screen.getByTestId('agent-sandbox').getAttribute('title')).toBe("Agents and checks run in the bwrap sandbox, but they can reach abstract sockets made outside it (an X11 display's, which types into your windows): this kernel cannot scope them with Landlock (Linux 6.12 or later can): EINVAL");
    // Its network mode, as the daemon settled it from config.json.
    answer = { ok: true, conditions: [], agentSandbox: { kind: 'bwrap', reason: null, unintended: false, sockets: null, network: 'proxied' } };
    await act(() => useHealth.getState().load());
    expect(screen.getByTestId('agent-sandbox').getAttribute('title')).toBe("Agents and checks run in the bwrap sandbox: no daemon token, no daemon process, the repository read-only. Network: only public hosts on ports 443 and 80, through Maestro's proxy, and agentSandbox.allow.");
    answer = { ok: true, conditions: [], agentSandbox: { kind: 'bwrap', reason: null, unintended: false, sockets: 'EINVAL' } };
    await act(() => useHealth.getState().load());
    act(() => setLanguage('zh'));
    expect(await screen.findByText('代理已隔离 (!)')).toBeTruthy();
    act(() => setLanguage('en'));
  });

  it('names a shared remote that does not answer, with the daemon\'s reason in the tooltip', () => {
    render(<Banner />);
    const message = 'The shared remote /srv/git/web.git of project web cannot be reached: fatal: repository not found.';
    act(() => void useHealth.getState().apply(healthEvent([{ code: 'REMOTE_UNREACHABLE', path: '/srv/git/web.git', message, since: 1 }]) as never));
    const alert = screen.getByRole('alert');
    expect(alert.textContent).toBe("The shared remote /srv/git/web.git does not answer: its project's tasks wait until it does.");
    expect(alert.getAttribute('title')).toBe(message);
  });

  it("names a project's folder that is gone, in the chosen language, with the daemon's words in the tooltip", async () => {
    render(<Banner />);
    const message = 'The folder /home/me/web of project web is gone (moved or deleted): its approved work cannot merge …';
    act(() => void useHealth.getState().apply(healthEvent([{ code: 'PROJECT_FOLDER_MISSING', path: '/home/me/web', message, since: 1 }]) as never));
    const alert = screen.getByRole('alert');
    expect(alert.textContent).toBe('The project folder /home/me/web is gone: its approved work waits in needs_attention until it is back (then retry it).');
    expect(alert.getAttribute('title')).toBe(message);
    act(() => setLanguage('fr'));
    expect(await screen.findByText('Le dossier de projet /home/me/web a disparu : son travail approuvé attend en needs_attention qu’il revienne (puis relancez-le).')).toBeTruthy();
    act(() => setLanguage('en'));
  });
});
