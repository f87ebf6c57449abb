/**
 * The fenced blocks the plan and the verdict are read from: the same blocks as the one regular expression finds,
 * and an answer of many fences never closed (an agent's output, megabytes of it) read in one pass.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { budget } from '../../../test/helpers/budget.js';
import { fencedBlocks } from './fencedBlocks.js';

const blocks = (text: string) => fencedBlocks(text).map((m) => ({ at: m.index, text: m[1] }));

describe('fencedBlocks', () => {
  it('finds ```json and bare blocks in order, with where each starts; an empty one; none without a closing fence', () => {
    expect(blocks('I looked.\n```json\n{"verdict": "approve"}\n```\nDone.')).toEqual([{ at: 10, text: '{"verdict": "approve"}' }]);
    expect(blocks('```\na\n```\n\n```json  \nb\nc\n```')).toEqual([{ at: 0, text: 'a' }, { at: 11, text: 'b\nc' }]);
    expect(blocks('```json\n\n```')).toEqual([{ at: 0, text: '' }]);
    expect(blocks('```json\n{"verdict": "approve"}')).toEqual([]);
    expect(blocks('```json\n{"a": 1}\n``` and ```\nnever closed')).toEqual([{ at: 0, text: '{"a": 1}' }]);
  });

  it('reads an answer of a million fences never closed (5 MB) in one pass: the verdict says what is missing (the plan is refused for its length first)', () => {
    // In a process of its own with a time limit: a regular expression that scans for minutes cannot be interrupted,
    // so in this one it would hold the suite instead of failing the test.
    const script = `
      const { parsePlanOutput } = await import(${JSON.stringify(pathToFileURL(join(import.meta.dirname, 'planParse.ts')).href)});
      const { parseVerdict } = await import(${JSON.stringify(pathToFileURL(join(import.meta.dirname, 'verdictParse.ts')).href)});
      const { fencedBlocks } = await import(${JSON.stringify(pathToFileURL(join(import.meta.dirname, 'fencedBlocks.ts')).href)});
      const answer = '\`\`\`\\nX'.repeat(1_000_000);
      const said = (f) => { try { f(); return 'read'; } catch (err) { return err.constructor.name + ': ' + err.message; } };
      console.log(JSON.stringify([fencedBlocks(answer).length, said(() => parsePlanOutput(answer, 50)), said(() => parseVerdict(answer))]));`;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { timeout: budget(60_000), encoding: 'utf8' });
    const [blocks, plan, verdict] = JSON.parse(out) as [number, string, string];
    expect(blocks).toBe(0);
    expect(plan).toBe('PlanParseError: the answer is 5,000,000 characters, more than a plan holds (1,000,000): answer with a short plan, the subtask table and the json block');
    expect(verdict).toMatch(/^VerdictParseError: no valid JSON verdict: /);
  });
});
