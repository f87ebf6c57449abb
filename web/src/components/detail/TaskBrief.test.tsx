import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import i18n from '../../i18n/index.js';
import { makeTask } from '../../testData.js';
import { SPEC_LINES, TaskBrief } from './TaskBrief.js';

afterEach(() => cleanup());

describe('TaskBrief', () => {
  it('says nothing for a task with neither a specification nor feedback', () => {
    const { container } = render(<TaskBrief task={makeTask()} baseBranch="main" feedbackAt={null} />);
    expect(container.textContent).toBe('');
  });

  it('folds a specification past a few lines behind "Show all", and unfolds it', () => {
    const spec = Array.from({ length: 12 }, (_, i) => `rule ${i + 1}`).join('\n');
    render(<TaskBrief task={makeTask({ spec })} baseBranch="main" feedbackAt={null} />);
    const shown = screen.getByTestId('brief-spec');
    expect(shown.className).toMatch(/folded/);
    fireEvent.click(screen.getByRole('button', { name: 'Show all (12 lines)' }));
    expect(shown.className).not.toMatch(/folded/);
    expect(screen.getByRole('button', { name: 'Show less' }).getAttribute('aria-expanded')).toBe('true');
    cleanup();
    // A short one is shown whole, with nothing to unfold.
    render(<TaskBrief task={makeTask({ spec: Array.from({ length: SPEC_LINES }, () => 'short').join('\n') })} baseBranch="main" feedbackAt={null} />);
    expect(screen.getByTestId('brief-spec').className).not.toMatch(/folded/);
    expect(screen.queryByRole('button')).toBeNull();
    cleanup();
    // One long line is folded too (it wraps past four lines on screen).
    render(<TaskBrief task={makeTask({ spec: 'word '.repeat(200) })} baseBranch="main" feedbackAt={null} />);
    expect(screen.getByRole('button', { name: 'Show all (1 line)' })).toBeTruthy();
  });

  it("says who rejected the version before, when and why, in the board's language from its data", async () => {
    const feedback = 'exec_review rejected by web: no tests\n\nLine comments from the reviewer (file:line — what to change):\n- src/a.ts:2 — keep b';
    const task = makeTask({
      status: 'exec_review', version: 2, feedback,
      feedbackSource: { kind: 'rejection', gate: 'exec_review', who: 'web', reason: 'no tests', comments: [{ file: 'src/a.ts', line: 2, side: 'new', text: 'keep b' }, { file: 'src/b.ts', line: 7, side: 'old', text: 'why gone?' }] },
    });
    const at = Date.UTC(2026, 11, 7, 6, 27);
    const said = () => screen.getByTestId('brief-feedback').textContent;
    render(<TaskBrief task={task} baseBranch="main" feedbackAt={at} />);
    expect(said()).toBe(`Feedback from version 1Rejected at execution review by web, ${new Date(at).toLocaleString('en')}: no testsLine comments from the reviewer:src/a.ts:2 — keep bsrc/b.ts:7 (old side, a removed line) — why gone?`);
    cleanup();
    // Without the time (a version whose rejection is not found), who and why all the same.
    render(<TaskBrief task={task} baseBranch="main" feedbackAt={null} />);
    expect(said()).toContain('Rejected at execution review by web: no tests');
    cleanup();
    try {
      for (const [lang, sentence] of [
        ['fr', `Rejetée en revue de l’exécution par web, ${new Date(at).toLocaleString('fr')} : no tests`],
        ['es', `Rechazada en revisión de la ejecución por web, ${new Date(at).toLocaleString('es')}: no tests`],
        ['ja', `web が ${new Date(at).toLocaleString('ja')} に実行レビューで却下：no tests`],
        ['zh', `web 于 ${new Date(at).toLocaleString('zh')} 在执行评审时拒绝：no tests`],
      ] as const) {
        await i18n.changeLanguage(lang);
        render(<TaskBrief task={task} baseBranch="main" feedbackAt={at} />);
        expect(said(), lang).toContain(sentence);
        expect(said(), lang).not.toContain('rejected by');
        cleanup();
      }
      // A retry from the base branch (trunk) after version 2 stopped.
      await i18n.changeLanguage('fr');
      render(<TaskBrief task={makeTask({ version: 3, feedback: 'Version 2 stopped…', feedbackSource: { kind: 'fresh', version: 2, who: 'ann', error: null } })} baseBranch="trunk" feedbackAt={null} />);
      expect(said()).toBe('Retour sur la version 2La version 2 s’est arrêtée et demandait votre attention. ann a relancé la tâche depuis le trunk actuel : cette version part d’une nouvelle branche issue de lui, et rien de la branche de la version 2 n’est repris.');
      cleanup();
    } finally {
      await i18n.changeLanguage('en');
    }
    // A version made before the data was kept: its text, as before.
    render(<TaskBrief task={makeTask({ version: 2, feedback: 'exec_review rejected by ann: old' })} baseBranch="main" feedbackAt={null} />);
    expect(said()).toBe('Feedback from version 1exec_review rejected by ann: old');
  });
});
