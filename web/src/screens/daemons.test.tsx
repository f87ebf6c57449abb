/**
 * The daemons screen and where the board names daemons: with one daemon (the SQLite default) nothing of daemons
 * shows, neither a link nor a column; with another on the database, the link, the list (host, version, last heard,
 * runs in flight, the settings that differ, any text shown on one line), and the daemon of each run.
 */
import { cleanup, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { DaemonEntry, DaemonList, DaemonSettings, Run } from '../api/types.js';
import { Runs } from '../components/detail/Runs.js';
import { Sidebar } from '../components/Sidebar.js';
import { useDaemons } from '../stores/daemons.js';
import { DaemonsScreen } from './DaemonsScreen.js';

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  useDaemons.setState({ list: null, error: null, readAt: null });
});

const settings: DaemonSettings = { version: '0.1.0', node: 'v20.0.0', leaseMs: 60_000, tickMs: 1000, maxConcurrentRuns: 4, maxConcurrentRunsPerProject: 2, reservedConflictSlots: 1, warmWorkers: 1, agentSandbox: 'bwrap' };
const daemon = (over: Partial<DaemonEntry>): DaemonEntry => ({
  name: 'laptop', host: 'laptop-host', pid: 1, home: '/home/me/.maestro', startedAt: 0, heartbeatAt: 0, lastHeardMsAgo: 2_000, runsInFlight: 0, state: 'live', self: true, settings, unreadable: null, differs: [], ...over,
});
const one: DaemonList = { self: 'laptop', settings, clockSkewMs: null, daemons: [daemon({})] };
const two: DaemonList = {
  self: 'laptop', settings, clockSkewMs: 300_000,
  daemons: [
    daemon({ name: 'build-1\u001b[2J', host: 'ci\nhost', self: false, lastHeardMsAgo: 240_000, state: 'stale', runsInFlight: 3, settings: { ...settings, leaseMs: 4000 }, differs: ['leaseMs'] }),
    daemon({}),
  ],
};

function answer(list: DaemonList) {
  vi.stubGlobal('fetch', async () => new Response(JSON.stringify(list), { status: 200 }));
}

let n = 0;
const run = (owner: string | null): Run => ({
  id: `r_${++n}`, taskId: 't_1', kind: 'execute', status: 'succeeded', model: null, traceId: 'tr', attempt: 1, startedAt: 0, endedAt: 500,
  inputTokens: 1, outputTokens: 1, costUsd: 0, error: null, runDir: null, owner, workerPid: null, outboxOffset: 0, outboxSeq: 0,
});

describe('daemons on the board', () => {
  it('with one daemon: no Daemons link and no daemon column in the runs', () => {
    useDaemons.setState({ list: one });
    render(<Sidebar />);
    expect(screen.queryByRole('link', { name: 'Daemons' })).toBeNull();
    cleanup();
    render(<Runs runs={[run('laptop')]} decision={null} />);
    expect(within(screen.getByTestId('runs')).queryByRole('columnheader', { name: 'Daemon' })).toBeNull();
  });

  it('with another daemon: the link, and the daemon of each run on one line', () => {
    useDaemons.setState({ list: two });
    render(<Sidebar />);
    expect(screen.getByRole('link', { name: 'Daemons' }).getAttribute('href')).toBe('#/daemons');
    cleanup();
    render(<Runs runs={[run('laptop'), run('build-1\nx'), run(null)]} decision={null} />);
    const table = screen.getByTestId('runs');
    within(table).getByRole('columnheader', { name: 'Daemon' });
    const rows = within(table).getAllByRole('row').slice(1, 4);
    expect(rows.map((r) => within(r).getAllByRole('cell').at(-1)!.textContent)).toEqual(['laptop', 'build-1\\u{a}x', '—']);
  });

  it('a run of a daemon gone from the list still names it, with one daemon listed', () => {
    useDaemons.setState({ list: one });
    render(<Runs runs={[run('laptop'), run('old-box')]} decision={null} />);
    const rows = within(screen.getByTestId('runs')).getAllByRole('row').slice(1, 3);
    expect(rows.map((r) => within(r).getAllByRole('cell').at(-1)!.textContent)).toEqual(['laptop', 'old-box']);
  });

  it('lists the daemons with host, version, last heard, runs in flight and the settings that differ; says the clock skew', async () => {
    answer(two);
    render(<DaemonsScreen />);
    const table = await screen.findByTestId('daemons');
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows.map((r) => [within(r).getByRole('rowheader').textContent, ...within(r).getAllByRole('cell').slice(0, 5).map((c) => c.textContent)])).toEqual([
      ['build-1\\u{1b}[2J', 'stale', 'ci\\u{a}host', '0.1.0', '240 s ago', '3'],
      ['laptop this one', 'live', 'laptop-host', '0.1.0', '2 s ago', '0'],
    ]);
    const notes = screen.getByRole('list', { name: 'Settings that differ' });
    expect(within(notes).getAllByRole('listitem').map((li) => li.textContent)).toEqual([
      'build-1\\u{1b}[2J: differs from laptop: leaseMs 4 s (laptop: 60 s).',
      'Stale: no heartbeat for three leases (killed, or cut off from the database); its tasks go back to ready when their leases end.',
    ]);
    expect(screen.getByTestId('clock-skew').textContent).toBe('This daemon (laptop) runs 300 s ahead of the database’s clock: ages here are by the database’s.');
  });

  it('says nothing of the clock when it agrees with the database’s to the second', async () => {
    answer({ ...two, clockSkewMs: -1_200 });
    render(<DaemonsScreen />);
    await screen.findByTestId('daemons');
    expect(screen.queryByTestId('clock-skew')).toBeNull();
    await waitFor(() => expect(useDaemons.getState().list?.clockSkewMs).toBe(-1_200));
  });
});
