import { describe, expect, it } from 'vitest';
import { curateIntentsFromEnv, legacyPerTurnFromEnv, normalizeIntentKey, resolveTitleDelta } from './intent.js';
import { isLowValue, isLowValueForExtractor, shouldSkipIntentCurate, type IntentDigest } from './gates.js';

describe('intent keys and title deltas (FORMATS §8.7)', () => {
  it('normalises aliases and prefixes; unknown is general', () => {
    expect(['fix', 'bugfix', 'coding', 'feature', 'testing', 'ci', 'implement_auth', 'debug_login', 'whatever'].map(normalizeIntentKey)).toEqual([
      'debug',
      'debug',
      'implement',
      'implement',
      'test_verify',
      'test_verify',
      'implement',
      'debug',
      'general',
    ]);
  });

  it('reads the curate list and the legacy switch from the environment', () => {
    expect([...curateIntentsFromEnv({})].sort()).toEqual(['debug', 'devops', 'implement', 'project_design', 'refactor', 'research']);
    expect([...curateIntentsFromEnv({ FLOW_WIKI_CURATE_INTENTS: 'explore, fix  test_verify' })].sort()).toEqual(['debug', 'explore', 'test_verify']);
    expect(['1', 'true', 'YES', '0', ''].map((v) => legacyPerTurnFromEnv({ FLOW_WIKI_LEGACY_PER_TURN: v }))).toEqual([true, true, true, false, false]);
  });

  it('infers the delta: explicit, else the hint, else pivot / refine / continue', () => {
    const hint = { intentKey: 'debug', nodeTitle: 'Login expiry' };
    expect(resolveTitleDelta(null, hint)).toBe('pivot');
    expect(resolveTitleDelta({ intentKey: 'implement', nodeTitle: 'x' }, hint)).toBe('pivot');
    expect(resolveTitleDelta({ intentKey: 'debug', nodeTitle: 'Other' }, hint)).toBe('refine');
    expect(resolveTitleDelta({ intentKey: 'debug', nodeTitle: 'Login expiry' }, hint)).toBe('continue');
    expect(resolveTitleDelta({ intentKey: 'implement', nodeTitle: 'x' }, { ...hint, titleDelta: 'continue' })).toBe('continue');
    expect(resolveTitleDelta({ intentKey: 'debug', nodeTitle: 'x' }, hint, 'done')).toBe('done');
    // Leaving a greeting with a non-greeting hint is always a pivot.
    expect(resolveTitleDelta({ intentKey: 'greeting', nodeTitle: 'hi' }, { ...hint, titleDelta: 'continue' })).toBe('pivot');
  });
});

describe('curation gates', () => {
  const none = { commands: [], files: [], nodeTypes: [] };
  it('isLowValue: greetings are low value, work or a long request is not; summary match is a plain substring', () => {
    expect(isLowValue('hello', '', none)).toBe(true);
    expect(isLowValue('yo', 'this works', none)).toBe(true); // "hi" inside "this"
    expect(isLowValue('yo', 'ok', none)).toBe(false);
    expect(isLowValue('hello', 'hi', { ...none, files: ['a.ts'] })).toBe(false);
    expect(isLowValue('hello there, please fix the login bug', 'hi', none)).toBe(false);
    expect(isLowValueForExtractor('yo', 'this works fine', none, 'success')).toBe(false); // word boundaries
    expect(isLowValueForExtractor('thanks', 'you are welcome!', none, 'success')).toBe(true);
    expect(isLowValueForExtractor('deploy it', 'deployed the service', { ...none, commands: ['make deploy'] }, 'abandoned')).toBe(true);
  });

  it('shouldSkipIntentCurate: empty_digest, low_value, no_increment, or go', () => {
    const digest = (turns: IntentDigest['turns']): IntentDigest => ({ sessionId: 's', intentKey: 'debug', nodeTitle: 't', anchorExplorationId: 'exp_2', turns, request: 'r', files: [], commands: [] });
    const turn = { explorationId: 'exp_1', request: 'why is the login slow today', summary: 'looked at it', persistMeta: null, commands: [], files: [], toolCount: 0, result: 'success' as const };
    expect(shouldSkipIntentCurate(digest([]))).toBe('empty_digest');
    expect(shouldSkipIntentCurate(digest([{ ...turn, request: 'hi', summary: 'hello' }]))).toBe('low_value');
    expect(shouldSkipIntentCurate(digest([turn]))).toBe('no_increment');
    expect(shouldSkipIntentCurate(digest([{ ...turn, toolCount: 2 }]))).toBeNull();
    expect(shouldSkipIntentCurate(digest([{ ...turn, persistMeta: { should_persist: true, solution_detail: 'add an index' } }]))).toBeNull();
  });
});
