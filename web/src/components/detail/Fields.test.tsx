import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTask } from '../../testData.js';
import { Fields } from './Fields.js';

afterEach(() => cleanup());

describe('Fields', () => {
  it('shows the last error while it explains the wait (needs attention), not once the task got past it', () => {
    const lastRunError = 'review_rounds: rounds 3, findings src/a.ts:2 add a comment';
    render(<Fields task={makeTask({ status: 'needs_attention', lastRunError })} runs={[]} />);
    expect(screen.getByText('Last error')).toBeTruthy();
    expect(screen.getByText(/src\/a\.ts:2 add a comment/)).toBeTruthy();
    cleanup();
    for (const status of ['exec_review', 'done'] as const) {
      render(<Fields task={makeTask({ status, lastRunError })} runs={[]} />);
      expect(screen.queryByText('Last error'), status).toBeNull();
      cleanup();
    }
  });
});
