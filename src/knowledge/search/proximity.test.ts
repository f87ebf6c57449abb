import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { coverageFactor, proximityBoost, proximityQuery, rescoreFactors, stem } from './proximity.js';
import { contentTerms } from '../index/query.js';

// Words from several scripts, with case, accents, final sigma, CJK, astral letters and digits.
const WORDS = ['Boundary', 'layer', 'layers', 'heating', 'heat', 'transfer', 'transferred', 'ΟΔΟΣ', 'Σίσυφος', 'naïve', 'café', 'über', '缓存', '缓存层', 'キャッシュ', '𝒜lpha', '𐐀𐐨', 'x86', '2026', 'a', 'is', 'ok'];
const SEPARATORS = [' ', '  ', '\n', ', ', '-', '_', '. ', '…', ' 😀 ', '\u00a0', '/'];

const text = fc.array(fc.tuple(fc.constantFrom(...WORDS), fc.constantFrom(...SEPARATORS)), { maxLength: 60 }).map((parts) => parts.map(([w, s]) => w + s).join(''));

describe('rescoreFactors reads each field once and agrees with the two scorers', () => {
  it('equals proximityBoost and coverageFactor on any text', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 5 }), text, text, text, fc.array(fc.constantFrom(...WORDS), { maxLength: 4 }), (qw, title, summary, body, tags) => {
        const terms = contentTerms(qw.join(' '));
        const q = proximityQuery(terms);
        const stems = new Set(terms.map(stem));
        const fields = { title, summary, body, tags };
        const got = rescoreFactors(q, stems, fields);
        expect(got.proximity).toBe(q ? proximityBoost(q, fields) : 1);
        expect(got.coverage).toBe(coverageFactor(stems, fields));
      }),
      { numRuns: 400 },
    );
  });

  it('boosts neighbouring query words and counts covered words', () => {
    const terms = contentTerms('heat transfer');
    const f = rescoreFactors(proximityQuery(terms), new Set(terms.map(stem)), { title: 'Heat transfer in layers', summary: '', body: 'nothing here', tags: [] });
    expect(f.proximity).toBeCloseTo(1.1, 10); // the title pair is near: 1 + 0.2 × 0.5
    expect(f.coverage).toBe(1);
    const none = rescoreFactors(proximityQuery(terms), new Set(terms.map(stem)), { title: 'Heat', summary: '', body: 'unrelated', tags: [] });
    expect(none.proximity).toBe(1);
    expect(none.coverage).toBeCloseTo(0.65 + 0.35 / 2, 10);
  });
});
