import { act, cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { makeTask } from '../../testData.js';
import { LiveOutput } from './LiveOutput.js';
import { TaskDetailPanel } from './TaskDetailPanel.js';

// Unmount first: a component still mounted would run its effects against the real globals.
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

class FakeSource {
  static last: FakeSource | null = null;
  readyState = 1;
  onopen: (() => void) | null = null;
  onerror: (() => void) | null = null;
  private fns = new Map<string, ((e: MessageEvent) => void)[]>();
  constructor(readonly url: string) {
    FakeSource.last = this;
  }
  addEventListener(k: string, fn: (e: MessageEvent) => void) {
    this.fns.set(k, [...(this.fns.get(k) ?? []), fn]);
  }
  close() {}
  emit(k: string, id: string, data: unknown) {
    for (const fn of this.fns.get(k) ?? []) fn(new MessageEvent(k, { data: JSON.stringify(data), lastEventId: id }));
  }
}

describe('TaskDetailPanel', () => {
  it('says so when the task was deleted', async () => {
    vi.stubGlobal('fetch', async () => new Response(JSON.stringify({ error: { code: 'UNKNOWN_TASK', message: 'No task "t_x".' } }), { status: 404 }));
    render(<TaskDetailPanel taskId="t_x" />);
    expect(await screen.findByText('This task no longer exists')).toBeTruthy();
    expect(screen.getByText('No task "t_x".')).toBeTruthy();
  });

  it('shows the reply box when the task awaits input', async () => {
    vi.stubGlobal('EventSource', FakeSource);
    const task = makeTask({ status: 'awaiting_input', title: 'Ask me' });
    vi.stubGlobal('fetch', async () => new Response(JSON.stringify({ task, runs: [], children: [], lastDecision: null })));
    render(<TaskDetailPanel taskId={task.id} />);
    expect(await screen.findByText('The agent asks a question')).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Send the answer' })).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Approve' })).toBeNull();
  });
});

describe('LiveOutput', () => {
  it('renders agent output as text, phases and questions marked', () => {
    vi.stubGlobal('EventSource', FakeSource);
    const { container } = render(<LiveOutput taskId="t1" />);
    const src = FakeSource.last!;
    expect(src.url).toBe('/api/tasks/t1/stream');
    act(() => {
      src.onopen?.();
      src.emit('phase', 'r:1', { runId: 'r', seq: 1, stage: 'agent', state: 'start' });
      src.emit('token', 'r:2', { runId: 'r', seq: 2, text: '<script>alert(1)</script><img src=x>' });
      src.emit('clarify', 'r:3', { runId: 'r', seq: 3, question: 'Which one?' });
    });
    const log = screen.getByTestId('live-output');
    expect(log.textContent).toContain('<script>alert(1)</script><img src=x>');
    expect(log.textContent).toContain('? Which one?');
    expect(container.querySelector('script, img')).toBeNull();
    expect(screen.getByText('(live)')).toBeTruthy();
  });
});
