/**
 * `maestro spec supersede` and `maestro knowhow supersede` (one command,
 * registered per kind): the old entry ends deprecated and pointing at the new
 * one, a second run says it was already done, and bad input changes nothing.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeKnowhowFile } from '../helpers/knowledge.js';
import { maestro, project } from '../helpers/knowledge2.js';
import { budget } from '../helpers/budget.js';

// Separate processes on a loaded machine: generous time, no timing assertions.
describe('maestro spec|knowhow supersede', { timeout: budget(240_000) }, () => {
  it('supersedes a spec entry, then says it is already done', async () => {
    const { dir } = project();
    const W = ['--workflow-root', dir];
    const first = await maestro(['spec', 'supersede', 'S-20260101-aaaa', 'S-20260102-bbbb', '--json', ...W]);
    expect([first.code, first.stderr]).toEqual([0, '']);
    expect(JSON.parse(first.stdout)).toMatchObject({ replayed: false });
    const again = await maestro(['spec', 'supersede', 'S-20260101-aaaa', 'S-20260102-bbbb', ...W]);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^already done: .+ → .+\n$/);
    expect(readFileSync(join(dir, '.workflow', 'specs', 'coding-conventions.md'), 'utf8')).toMatch(/deprecated/);
  });

  it('supersedes a knowhow document; an unknown one is refused and nothing changes', async () => {
    const { dir, root } = project({ specs: false });
    const W = ['--workflow-root', dir];
    const oldId = writeKnowhowFile(root, 'TIP-old-retries', { title: 'Retry twice' }, 'Retry twice.');
    const newId = writeKnowhowFile(root, 'TIP-new-retries', { title: 'Retry with backoff' }, 'Retry with backoff.');
    const before = readFileSync(join(dir, '.workflow', 'knowhow', 'TIP-old-retries.md'), 'utf8');
    const unknown = await maestro(['knowhow', 'supersede', oldId, 'knowhow-nope', ...W]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/knowhow-nope/);
    expect(readFileSync(join(dir, '.workflow', 'knowhow', 'TIP-old-retries.md'), 'utf8')).toBe(before);
    const done = await maestro(['knowhow', 'supersede', oldId, newId, '--json', ...W]);
    expect([done.code, done.stderr]).toEqual([0, '']);
    expect(JSON.parse(done.stdout)).toEqual({ oldId, newId, replayed: false });
    const old = readFileSync(join(dir, '.workflow', 'knowhow', 'TIP-old-retries.md'), 'utf8');
    expect(old).toContain('status: "deprecated"');
    expect(old).toContain(`supersededBy: "${newId}"`);
  });
});
