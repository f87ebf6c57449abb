import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonErrorOffset, jsonSyntaxWhere } from './jsonError.js';

const parses = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

describe('jsonSyntaxWhere', () => {
  it('says where the text goes wrong, by line and column, and quotes none of it', () => {
    expect(jsonSyntaxWhere('TOPSECRET\n')).toBe('line 1, column 1');
    expect(jsonSyntaxWhere('{"a": 1,\n  "b": tru}')).toBe('line 2, column 8');
    expect(jsonSyntaxWhere('{"a": 1,\n  "b": [1, 2,]}')).toBe('line 2, column 14');
    expect(jsonSyntaxWhere('{"schema_version": ')).toBe('it ends early, at line 1, column 20');
    expect(jsonSyntaxWhere('"a\\qb"')).toBe('line 1, column 4');
    expect(jsonSyntaxWhere('{} {}')).toBe('line 1, column 4');
  });

  it('finds an error exactly where JSON.parse does: valid text has none, broken text one', () => {
    const mutated = fc.tuple(fc.json(), fc.nat(), fc.constantFrom('', 'x', '"', '\\', '[', '{', ',', ':', '}', ']', '0', '-', '.', 'e', '\n')).map(([j, at, c]) => {
      const k = at % (j.length + 1);
      return j.slice(0, k) + c + j.slice(k + (c === '' ? 1 : 0));
    });
    fc.assert(fc.property(fc.oneof(fc.json(), mutated), (text) => (jsonErrorOffset(text) === null) === parses(text)), { numRuns: 3000 });
    expect(jsonErrorOffset('['.repeat(200_000))).toBe(200_000); // its own stack: deep nesting does not overflow ours
  });
});
