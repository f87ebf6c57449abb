import { describe, expect, it } from 'vitest';
import { MAX_FINDINGS, parseVerdict, VerdictParseError } from './verdictParse.js';

describe('parseVerdict: the problems of an answer', () => {
  it('names the first ten and counts the rest (200,000 findings that were not objects made a 13 MB message)', () => {
    const text = '```json\n' + JSON.stringify({ verdict: 'approve', findings: Array(150).fill(0) }) + '\n```';
    expect(() => parseVerdict(text)).toThrow(VerdictParseError);
    expect(() => parseVerdict(text)).toThrow(/^findings\.0: .*; and 140 more problems like these$/);
  });

  it('lists one problem as it is', () => {
    expect(() => parseVerdict('```json\n{"verdict": "maybe"}\n```')).toThrow(/^verdict: [^;]*$/);
  });
});

describe('parseVerdict: the size of a verdict', () => {
  const verdict = (findings: unknown[]) => '```json\n' + JSON.stringify({ verdict: 'reject', findings }) + '\n```';
  const finding = { severity: 'high', file: 'src/a.ts', line: 3, message: 'off by one' };

  it('keeps as many findings as the limit', () => {
    expect(parseVerdict(verdict(Array(MAX_FINDINGS).fill(finding))).findings).toHaveLength(MAX_FINDINGS);
  });

  it('refuses more findings, or a finding of any length, saying which (they are kept on the task and quoted in the next prompt)', () => {
    expect(() => parseVerdict(verdict(Array(MAX_FINDINGS + 1).fill(finding)))).toThrow(`findings: at most ${MAX_FINDINGS} findings: group the rest, or name the most important`);
    expect(() => parseVerdict(verdict([{ ...finding, message: 'x'.repeat(10_001) }]))).toThrow(/^findings\.0\.message: /);
    expect(() => parseVerdict(verdict([{ ...finding, file: 'a/'.repeat(600) }]))).toThrow(/^findings\.0\.file: /);
  });
});
