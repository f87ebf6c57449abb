import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import i18n from '../../i18n/index.js';
import { makeTask } from '../../testData.js';
import { Fields } from './Fields.js';

afterEach(() => cleanup());

describe('Fields', () => {
  it('shows the last error while it explains the wait (needs attention), not once the task got past it', () => {
    const lastRunError = 'review_rounds: rounds 3, findings src/a.ts:2 add a comment';
    render(<Fields task={makeTask({ status: 'needs_attention', lastRunError })} runs={[]} baseBranch="main" />);
    expect(screen.getByText('Last error')).toBeTruthy();
    expect(screen.getByText(/src\/a\.ts:2 add a comment/)).toBeTruthy();
    cleanup();
    for (const status of ['exec_review', 'done'] as const) {
      render(<Fields task={makeTask({ status, lastRunError })} runs={[]} baseBranch="main" />);
      expect(screen.queryByText('Last error'), status).toBeNull();
      cleanup();
    }
  });

  it("says a version's feedback in the board's language from its data, not the server's English text", async () => {
    const feedback = 'exec_review rejected by web: no tests\n\nLine comments from the reviewer (file:line — what to change):\n- src/a.ts:2 — keep b';
    const task = makeTask({
      status: 'ready', version: 2, feedback,
      feedbackSource: { kind: 'rejection', gate: 'exec_review', who: 'web', reason: 'no tests', comments: [{ file: 'src/a.ts', line: 2, side: 'new', text: 'keep b' }, { file: 'src/b.ts', line: 7, side: 'old', text: 'why gone?' }] },
    });
    const said = () => screen.getByTestId('field.feedback').textContent;
    render(<Fields task={task} runs={[]} baseBranch="main" />);
    expect(said()).toBe('Rejected at execution review by web: no testsLine comments from the reviewer:src/a.ts:2 — keep bsrc/b.ts:7 (old side, a removed line) — why gone?');
    cleanup();
    try {
      for (const [lang, sentence] of [
        ['fr', 'Rejetée en revue de l’exécution par web : no tests'],
        ['es', 'Rechazada en revisión de la ejecución por web: no tests'],
        ['ja', 'web が実行レビューで却下：no tests'],
        ['zh', 'web 在执行评审时拒绝：no tests'],
      ] as const) {
        await i18n.changeLanguage(lang);
        render(<Fields task={task} runs={[]} baseBranch="main" />);
        expect(said(), lang).toContain(sentence);
        expect(said(), lang).not.toContain('rejected by');
        cleanup();
      }
      // A retry from the base branch (trunk) after version 2 stopped.
      await i18n.changeLanguage('fr');
      render(<Fields task={makeTask({ version: 3, feedback: 'Version 2 stopped…', feedbackSource: { kind: 'fresh', version: 2, who: 'ann', error: null } })} runs={[]} baseBranch="trunk" />);
      expect(said()).toBe('La version 2 s’est arrêtée et demandait votre attention. ann a relancé la tâche depuis le trunk actuel : cette version part d’une nouvelle branche issue de lui, et rien de la branche de la version 2 n’est repris.');
      cleanup();
    } finally {
      await i18n.changeLanguage('en');
    }
    // A version made before the data was kept: its text, as before.
    render(<Fields task={makeTask({ feedback: 'exec_review rejected by ann: old' })} runs={[]} baseBranch="main" />);
    expect(said()).toBe('exec_review rejected by ann: old');
  });
});
