import { describe, expect, it } from 'vitest';
import { ApiError } from '../api/client.js';
import i18n from '../i18n/index.js';
import { errorText, translateReason } from './reasons.js';
import { fitPlaceholder, textUnits } from './fit.js';

describe('server reasons and codes in the reader language', () => {
  it('translates the reason code of a needs-attention error and keeps the details', async () => {
    expect(translateReason(i18n.t, 'agent_timeout: {"stage":"execute"}')).toBe('The agent timed out: {"stage":"execute"}');
    expect(translateReason(i18n.t, 'WORKER_DIED: the worker died 3 times on this run')).toBe('The worker process died: the worker died 3 times on this run');
    expect(translateReason(i18n.t, 'review rounds used up')).toBe('The review rounds are used up (review rounds used up)');
    // Unknown codes and plain sentences are left as the server wrote them.
    expect(translateReason(i18n.t, 'something: else')).toBe('something: else');
    await i18n.changeLanguage('ja');
    expect(translateReason(i18n.t, 'diff_gate: {"lines":9000}')).toBe('変更がプロジェクトの許容サイズを超えています: {"lines":9000}');
    await i18n.changeLanguage('en');
  });

  it('puts the translated error code before the server message outside English', async () => {
    const err = new ApiError(409, 'WRONG_GATE', 'Task t_1 waits at plan_review.');
    expect(errorText(i18n.t, 'en', err)).toBe('Task t_1 waits at plan_review.');
    await i18n.changeLanguage('fr');
    expect(errorText(i18n.t, 'fr', err)).toBe('La tâche attend à une autre étape: Task t_1 waits at plan_review.');
    expect(errorText(i18n.t, 'fr', new ApiError(500, 'SOMETHING_NEW', 'x'))).toBe('x');
    await i18n.changeLanguage('en');
  });
});

describe('fitPlaceholder', () => {
  it('counts CJK characters double', () => {
    expect(textUnits('Search titles')).toBe(13);
    expect(textUnits('搜索标题')).toBe(8);
    expect(fitPlaceholder('Rechercher dans les titres')).toEqual({ width: 'calc(26ch + 36px)', maxWidth: '100%' });
  });
});
