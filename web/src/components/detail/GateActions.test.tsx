import { fireEvent, render, screen, waitFor, cleanup } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { makeTask } from '../../testData.js';
import { GateActions } from './GateActions.js';

// Unmount first: a component still mounted would run its effects against the real globals.
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

function stubFetch(status = 200, body: unknown = { task: {} }) {
  const calls: { url: string; method: string; body: unknown }[] = [];
  vi.stubGlobal('fetch', async (url: string, init: RequestInit) => {
    calls.push({ url, method: String(init.method), body: init.body ? JSON.parse(String(init.body)) : undefined });
    return new Response(JSON.stringify(body), { status });
  });
  return calls;
}

describe('GateActions', () => {
  it('shows nothing to decide outside a gate', () => {
    render(<GateActions task={makeTask({ status: 'executing' })} onDone={() => {}} />);
    expect(screen.queryByRole('button', { name: 'Approve' })).toBeNull();
  });

  it('approves the gate the task waits at', async () => {
    const calls = stubFetch();
    const onDone = vi.fn();
    const task = makeTask({ status: 'spec_review' });
    render(<GateActions task={task} onDone={onDone} />);
    fireEvent.click(screen.getByRole('button', { name: 'Approve' }));
    await waitFor(() => expect(onDone).toHaveBeenCalled());
    expect(calls).toEqual([{ url: `/api/tasks/${task.id}/approve`, method: 'POST', body: { gate: 'spec_review', who: 'web' } }]);
  });

  it('refuses to reject without a reason, then sends the reason', async () => {
    const calls = stubFetch();
    const task = makeTask({ status: 'exec_review' });
    render(<GateActions task={task} onDone={() => {}} />);
    fireEvent.click(screen.getByRole('button', { name: 'Reject' }));
    expect(screen.getByRole('alert').textContent).toBe('A rejection needs a reason.');
    expect(calls).toEqual([]);
    fireEvent.change(screen.getByLabelText('Reason (required to reject)'), { target: { value: '  tests are missing ' } });
    fireEvent.click(screen.getByRole('button', { name: 'Reject' }));
    await waitFor(() => expect(calls.length).toBe(1));
    expect(calls[0]!.body).toEqual({ gate: 'exec_review', reason: 'tests are missing', who: 'web' });
  });

  it("shows the server's refusal", async () => {
    stubFetch(409, { error: { code: 'ILLEGAL_TRANSITION', message: 'Task t is done; nothing to approve.' } });
    render(<GateActions task={makeTask({ status: 'plan_review' })} onDone={() => {}} />);
    fireEvent.click(screen.getByRole('button', { name: 'Approve' }));
    await waitFor(() => expect(screen.getByRole('alert').textContent).toBe('Task t is done; nothing to approve.'));
  });
});
