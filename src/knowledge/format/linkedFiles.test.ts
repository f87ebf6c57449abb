/**
 * Spec and knowhow files that are symbolic links. They were left out without a word; maestro-flow reads them as
 * the files they lead to. Every reader (`maestro search` in the project, the daemon, an agent's tools,
 * --workflow-root) reads one when it leads inside the project, and names one that leads out in the health report
 * without reading it: what any reader reads goes into the project's index file, which agents can read, and a link
 * to the daemon's token followed by a `maestro search` in the project put the token there (a trial).
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempRoot, writeKnowhowFile } from '../../../test/helpers/knowledge.js';
import { openKnowledge, type Knowledge } from '../knowledge.js';

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

const spec = (title: string) => `<spec-entry category="learning" keywords="heron" date="2026-01-01" title="${title}">\nheron word\n</spec-entry>\n`;

function titles(k: Knowledge): string[] {
  return k.search('heron', { limit: 20 }).results.map((r) => r.name).sort();
}

function withKnowledge<T>(k: Knowledge, fn: (k: Knowledge) => T): T {
  try {
    return fn(k);
  } finally {
    k.close();
  }
}

describe('spec and knowhow files that are symbolic links', () => {
  it('are read as the files they lead to when that is inside the project, by every reader; one leading out is named, and nothing of it reaches the index file', () => {
    const { dir, root } = tempRoot();
    const outside = mkdtempSync(join(tmpdir(), 'maestro-outside-'));
    made.push(outside);
    const specs = join(root.workflowDir, 'specs');
    mkdirSync(specs, { recursive: true });
    mkdirSync(join(dir, 'docs'));
    writeFileSync(join(dir, 'docs', 'shared.md'), spec('Shared inside'));
    symlinkSync(join(dir, 'docs', 'shared.md'), join(specs, 'shared.md'));
    writeFileSync(join(outside, 'planted.md'), spec('Planted outside TOKEN-7f3a'));
    const planted = join(specs, 'planted.md');
    symlinkSync(join(outside, 'planted.md'), planted);
    writeKnowhowFile(root, 'TIP-heron', { title: 'Heron tip', tags: ['heron'] }, 'heron word');
    writeFileSync(join(outside, 'KNOW-out.md'), '---\ntitle: "Heron planted knowhow"\ntype: tip\ntags: [heron]\n---\n\nheron word TOKEN-7f3a\n');
    const plantedKnowhow = join(root.workflowDir, 'knowhow', 'KNOW-out.md');
    symlinkSync(join(outside, 'KNOW-out.md'), plantedKnowhow);
    // A link to a file inside the project that is itself a link out.
    symlinkSync(join(outside, 'planted.md'), join(dir, 'docs', 'relay.md'));
    symlinkSync(join(dir, 'docs', 'relay.md'), join(specs, 'relay.md'));
    symlinkSync(join(outside, 'missing.md'), join(specs, 'dangling.md'));
    const env = { ...process.env, MAESTRO_HOME: root.home };

    for (const open of [() => openKnowledge({ cwd: dir, includeGlobal: false, env }), () => openKnowledge({ workflowRoot: dir, env })]) {
      withKnowledge(open(), (k) => {
        expect(titles(k)).toEqual(['Heron tip', 'Shared inside']);
        expect(k.health('spec').findings.filter((f) => f.code === 'link-outside').map((f) => f.file).sort()).toEqual([planted, join(specs, 'relay.md')]);
        expect(k.health('spec').findings.find((f) => f.file === planted)?.message).toContain(`Refusing to read ${planted}: ${planted} is a symbolic link leading to ${join(outside, 'planted.md')}, outside the project ${dir}.`);
        expect(k.health('knowhow').findings).toContainEqual(expect.objectContaining({ file: plantedKnowhow, code: 'link-outside' }));
      });
    }
    // Nothing of what the links lead to is in the index's files, in a row or in a page left free.
    for (const name of readdirSync(root.workflowDir).filter((n) => n.startsWith('.maestro-index.db'))) {
      expect(readFileSync(join(root.workflowDir, name)).includes('TOKEN-7f3a'), name).toBe(false);
    }
  });

  it('a knowhow folder linked out of the project is not read by maestro search in the project either', () => {
    const { dir, root } = tempRoot();
    const notes = mkdtempSync(join(tmpdir(), 'maestro-notes-'));
    made.push(notes);
    writeFileSync(join(notes, 'TIP-private.md'), '---\ntitle: "Heron private notes"\ntype: tip\ntags: [heron]\n---\n\nheron word\n');
    symlinkSync(notes, join(root.workflowDir, 'knowhow'));
    withKnowledge(openKnowledge({ cwd: dir, includeGlobal: false, env: { ...process.env, MAESTRO_HOME: root.home } }), (k) => expect(titles(k)).toEqual([]));
  });
});
