import { describe, expect, it } from 'vitest';
import { readableDetails } from './outcomes.js';

describe('readableDetails', () => {
  it('says a needs-attention record in words: findings as file:line message, numbers and strings as they are', () => {
    const details = { rounds: 3, findings: [{ severity: 'medium', file: 'src/a.ts', line: 2, message: 'add a comment' }, { severity: 'low', message: 'no test' }] };
    expect(readableDetails(details)).toBe('rounds 3, findings src/a.ts:2 add a comment; no test');
    expect(readableDetails({ files: ['a.ts', 'b.ts'], limit: { files: 10 } })).toBe('files a.ts; b.ts, limit {"files":10}');
    expect(readableDetails({ big: 'x'.repeat(5000) })).toHaveLength(2000);
  });
});
