import { describe, expect, it } from 'vitest';
import { parseVerdict, VerdictParseError } from './verdictParse.js';

describe('parseVerdict: the problems of an answer', () => {
  it('names the first ten and counts the rest: 200,000 findings that are not objects made a 13 MB message', () => {
    const text = '```json\n' + JSON.stringify({ verdict: 'approve', findings: Array(20_000).fill(0) }) + '\n```';
    expect(() => parseVerdict(text)).toThrow(VerdictParseError);
    expect(() => parseVerdict(text)).toThrow(/^findings\.0: .*; and 19,990 more problems like these$/);
  });

  it('lists one problem as it is', () => {
    expect(() => parseVerdict('```json\n{"verdict": "maybe"}\n```')).toThrow(/^verdict: [^;]*$/);
  });
});
