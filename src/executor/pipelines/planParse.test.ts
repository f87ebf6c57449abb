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

describe('parsePlanOutput: the problems of an answer', () => {
  it('names the first ten and counts the rest: 490,000 bad deps made a 28 MB message, sent back as the retry prompt', () => {
    const text = '```json\n' + JSON.stringify({ plan: 'p', subtasks: [{ title: 'a', complexity: 'easy', deps: Array(100_000).fill(9) }] }) + '\n```';
    let message = '';
    try {
      parsePlanOutput(text, 20);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message.startsWith('subtasks.0.deps: 9 is not the index of a subtask (0..0); ')).toBe(true);
    expect(message.endsWith('; and 99,990 more problems like these')).toBe(true);
    expect(message.length).toBeLessThan(1000);
  });

  it('does the same for the schema\'s own problems', () => {
    const text = '```json\n' + JSON.stringify({ plan: 'p', subtasks: Array.from({ length: 12 }, (_, i) => ({ title: `s${i}`, complexity: 'huge' })) }) + '\n```';
    expect(() => parsePlanOutput(text, 20)).toThrow(/^subtasks\.0\.complexity: .*; and 2 more problems like these$/);
  });
});
