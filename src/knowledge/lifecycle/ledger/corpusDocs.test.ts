/**
 * The incremental corpus (corpusDocs.ts) against the full recipe: after every
 * kind of edit — a file added, changed, deleted, renamed; entries inserted at
 * the front, the middle and the end of the fingerprint order; a whole block
 * of rows removed; an edit outside the fingerprinted fields — the cached
 * fingerprint and docs equal a from-scratch read.
 */
import { appendFileSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CorpusCache, readCorpus } from './corpusDocs.js';

const cache = new CorpusCache();
import { EMPTY_SHA } from './recipes.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  cache.clear();
});

const entry = (sid: string, title: string, body: string, extra = '') => `<spec-entry category="coding" keywords="k" date="2026-01-01" sid="${sid}" title="${title}"${extra}>\n\n### ${title}\n\n${body}\n\n</spec-entry>\n\n`;

function corpus(): string {
  const wf = join(mkdtempSync(join(tmpdir(), 'maestro-corpus-')), '.workflow');
  dirs.push(join(wf, '..'));
  mkdirSync(join(wf, 'specs'), { recursive: true });
  mkdirSync(join(wf, 'knowhow'), { recursive: true });
  // 300 spec rows over 6 files (several 64-row blocks), interleaved ids so a file's rows are spread out.
  for (let f = 0; f < 6; f++) {
    let text = '';
    for (let i = 0; i < 50; i++) {
      const n = i * 6 + f;
      text += entry(`S-20260101-${n.toString(16).padStart(4, '0')}`, `Rule ${n}`, `Rule ${n} says something about module ${n}.`);
    }
    writeFileSync(join(wf, 'specs', `f${f}.md`), text);
  }
  for (let k = 0; k < 20; k++) writeFileSync(join(wf, 'knowhow', `TIP-20260101-t${k}.md`), `---\ntitle: "Tip ${k}"\ntype: tip\n---\n\nTip ${k} body.\n`);
  return wf;
}

function same(wf: string): string {
  const inc = cache.read(wf);
  const full = readCorpus(wf);
  expect(inc.fingerprint).toBe(full.fingerprint);
  expect(inc.docs).toEqual(full.docs);
  return inc.fingerprint;
}

describe('incremental corpus fingerprint', () => {
  it('equals the full recipe after every kind of edit, and parses only what changed', () => {
    const wf = corpus();
    let last = same(wf);
    const step = (edit: () => void, parsedAtMost: number, changes = true) => {
      edit();
      const full = readCorpus(wf).fingerprint;
      const inc = cache.read(wf);
      expect(inc.parsed).toBeLessThanOrEqual(parsedAtMost);
      expect(inc.fingerprint).toBe(full);
      expect(same(wf) !== last).toBe(changes);
      last = inc.fingerprint;
    };
    step(() => appendFileSync(join(wf, 'specs', 'f2.md'), entry('S-20251231-0000', 'First', 'Sorts before every other row.')), 1);
    // A second row with an existing id (0x95 is in f5): ties keep the listing order, as a stable sort does.
    step(() => appendFileSync(join(wf, 'specs', 'f3.md'), entry('S-20260101-0095', 'Middle', 'Sorts in the middle.')), 1);
    step(() => appendFileSync(join(wf, 'specs', 'f4.md'), entry('S-20991231-ffff', 'Last', 'Sorts after every other row.')), 1);
    step(() => writeFileSync(join(wf, 'specs', 'f1.md'), entry('S-20260101-0001', 'Rule 1', 'Rewritten.')), 1); // 49 rows leave
    step(() => rmSync(join(wf, 'specs', 'f0.md')), 0);
    // The path is not in the recipe: a rename keeps the value (f3's duplicate still sorts first).
    step(() => renameSync(join(wf, 'specs', 'f5.md'), join(wf, 'specs', 'g5.md')), 1, false);
    step(() => renameSync(join(wf, 'specs', 'f3.md'), join(wf, 'specs', 'h3.md')), 1);
    step(() => writeFileSync(join(wf, 'knowhow', 'TIP-20260101-new.md'), '---\ntitle: "New tip"\ntype: tip\n---\n\nNew.\n'), 1);
    step(() => writeFileSync(join(wf, 'knowhow', 'TIP-20260101-t3.md'), '---\ntitle: "Tip 3"\ntype: tip\nstatus: deprecated\n---\n\nTip 3 body.\n'), 1);
    step(() => writeFileSync(join(wf, 'specs', 'f2.md'), '---\ntitle: x\n---\n'), 1); // every row of a file gone
    // An edit outside the fingerprinted fields (the category) keeps the hash but refreshes the docs.
    const fp = cache.read(wf).fingerprint;
    writeFileSync(join(wf, 'specs', 'f1.md'), entry('S-20260101-0001', 'Rule 1', 'Rewritten.').replace('category="coding"', 'category="arch"'));
    expect(same(wf)).toBe(fp);
    expect(cache.read(wf).docs.find((d) => d.id === 'S-20260101-0001')!.category).toBe('arch');
    // Everything gone: the published empty value.
    rmSync(join(wf, 'specs'), { recursive: true });
    rmSync(join(wf, 'knowhow'), { recursive: true });
    expect(same(wf)).toBe(EMPTY_SHA);
  });

  it('a same-size rewrite right after a read is still seen (racy timestamps are re-read)', () => {
    const wf = corpus();
    const file = join(wf, 'specs', 'f0.md');
    writeFileSync(file, entry('S-20260101-aaaa', 'Racy', 'Version A.'));
    const a = cache.read(wf).fingerprint;
    // Same size, possibly the same coarse mtime: only a re-read can tell.
    writeFileSync(file, entry('S-20260101-aaaa', 'Racy', 'Version B.'));
    const b = cache.read(wf).fingerprint;
    expect(b).not.toBe(a);
    expect(b).toBe(readCorpus(wf).fingerprint);
  });
});
