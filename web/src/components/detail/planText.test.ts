import { describe, expect, it } from 'vitest';
import { splitPlan } from './planText.js';

const PLAN = `Reading the repository.

Build it in two steps.

| # | title |
| --- | --- |
| 0 | One |

\`\`\`json
{"plan":"Build it in two steps.","subtasks":[{"title":"One","complexity":"easy","priority":"P0","deps":[],"ownedFiles":["a.js"]},{"title":"Two","deps":[0]}]}
\`\`\``;

describe('splitPlan', () => {
  it('separates the prose from the proposed subtasks', () => {
    const { prose, subtasks } = splitPlan(PLAN);
    expect(prose).toBe('Reading the repository.\n\nBuild it in two steps.');
    expect(subtasks?.map((s) => [s.title, s.deps])).toEqual([
      ['One', []],
      ['Two', [0]],
    ]);
    expect(subtasks?.[0]?.ownedFiles).toEqual(['a.js']);
  });

  it('keeps an unparseable plan whole as prose', () => {
    const broken = 'Plan\n```json\n{not json\n```';
    expect(splitPlan(broken)).toEqual({ prose: broken, subtasks: null });
    expect(splitPlan('just words')).toEqual({ prose: 'just words', subtasks: null });
  });
});
