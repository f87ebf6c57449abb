import { describe, expect, it } from 'vitest';
import { parsePlanOutput, PlanParseError } from './planParse.js';

const answer = (count: number) =>
  '```json\n' + JSON.stringify({ plan: 'p', subtasks: Array.from({ length: count }, (_, i) => ({ title: `Step ${i}`, complexity: 'easy' })) }) + '\n```';

describe('parsePlanOutput: the number of subtasks', () => {
  it('takes a plan of as many subtasks as the limit', () => {
    expect(parsePlanOutput(answer(100), 100).subtasks).toHaveLength(100);
  });

  it('refuses one more, naming the count, the limit and the setting', () => {
    expect(() => parsePlanOutput(answer(3000), 100)).toThrow(PlanParseError);
    expect(() => parsePlanOutput(answer(3000), 100)).toThrow('the plan has 3,000 subtasks, more than the limit of 100 (limits.maxSubtasks in .maestro/config.json)');
    expect(() => parsePlanOutput(answer(3), 2)).toThrow('the plan has 3 subtasks, more than the limit of 2');
  });
});

describe('parsePlanOutput: the length of the answer', () => {
  it('refuses an answer longer than a plan holds (the gate shows it and the task keeps it), naming both lengths', () => {
    const long = 'x'.repeat(1_000_000) + '\n' + answer(1);
    expect(() => parsePlanOutput(long, 100)).toThrow(new PlanParseError(`the answer is ${long.length.toLocaleString('en-US')} characters, more than a plan holds (1,000,000): answer with a short plan, the subtask table and the json block`));
    expect(parsePlanOutput('x'.repeat(900_000) + '\n' + answer(1), 100).subtasks).toHaveLength(1);
  });
});
