import { render, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { Run } from '../../api/types.js';
import { Runs } from './Runs.js';

let n = 0;
const run = (over: Partial<Run>): Run => ({
  id: `r_${++n}`, taskId: 't_1', kind: 'execute', status: 'succeeded', model: null, traceId: 'tr', attempt: 2, startedAt: n * 1000, endedAt: n * 1000 + 500,
  inputTokens: 10, outputTokens: 5, costUsd: 0, error: null, runDir: null, owner: null, workerPid: null, outboxOffset: 0, outboxSeq: 0, ...over,
});

describe('Runs', () => {
  it('numbers attempts per kind (the first execute run is attempt 1) and shows the model the agent got', () => {
    // task.attempt counts claims: after a plan run the first execute run carries the fence value 2.
    const runs = [run({ kind: 'plan', attempt: 1, model: 'opus' }), run({ kind: 'execute', attempt: 2, model: 'model-x', status: 'failed', error: 'agent_failed: {}' }), run({ kind: 'execute', attempt: 3, model: 'model-x, model-y' }), run({ kind: 'review', attempt: 3, model: null })];
    render(<Runs runs={runs} decision={null} />);
    const rows = within(screen.getByTestId('runs')).getAllByRole('row').slice(1, 5);
    expect(rows.map((r) => within(r).getAllByRole('cell').slice(0, 4).map((c) => c.textContent))).toEqual([
      ['plan', '1', 'succeeded', 'opus'],
      ['execute', '1', 'failed', 'model-x'],
      ['execute', '2', 'succeeded', 'model-x, model-y'],
      ['review', '1', 'succeeded', '—'],
    ]);
    expect(rows[1]!.getAttribute('title')).toBe('The agent failed: {}');
  });

  it('says how many ready tasks the claim beat, in the singular for one', () => {
    const decision = (competitors: number) => ({
      id: 1, projectId: 'p_1', taskId: 't_1', owner: 'host-a', score: 2.5, at: 0,
      breakdown: { rankU: 2, chainInertia: 0.5, agingBonus: 0, couplingPenalty: 0 },
      competitors: Array.from({ length: competitors }, (_, i) => ({ taskId: `t_${i + 2}`, score: 1 })),
      takenOver: null,
    });
    const { rerender } = render(<Runs runs={[]} decision={decision(1)} />);
    expect(screen.getByText('It beat 1 other ready task.')).toBeTruthy();
    rerender(<Runs runs={[]} decision={decision(3)} />);
    expect(screen.getByText('It beat 3 other ready tasks.')).toBeTruthy();
  });

  it("says a takeover is one: from which daemon, where the task stood, and that the score is the first claim's", () => {
    const at = new Date(2026, 11, 7, 9, 30, 5).getTime();
    const decision = {
      id: 2, projectId: 'p_1', taskId: 't_1', owner: 'host-b', score: 2.5, at,
      breakdown: { rankU: 2, chainInertia: 0.5, agingBonus: 0, couplingPenalty: 0 },
      competitors: [], takenOver: { from: 'host-a', status: 'reviewing' as const },
    };
    render(<Runs runs={[]} decision={decision} />);
    const when = new Date(at).toLocaleTimeString('en');
    expect(screen.getByText(`Taken over by host-b at ${when} from host-a, whose lease on it ended while it was at reviewing: nothing was ranked, the score is the one host-a claimed it with (2.500).`)).toBeTruthy();
    expect(screen.queryByText(/claimed by host-b/)).toBeNull();
  });
});
