/**
 * Spec and knowhow files that are symbolic links. They were left out without a word; maestro-flow reads them as
 * the files they lead to. `maestro search` in the project reads them so; a confined root (the daemon, an agent's
 * tools, --workflow-root) reads one only when it leads inside the project, and names one that leads out in the
 * health report. One index file serves both views: what the first indexed through a link out is not served by
 * the second.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
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
  it('are read as the files they lead to; a confined root reads only those leading inside the project, and names the others', () => {
    const { dir, root } = tempRoot();
    const outside = mkdtempSync(join(tmpdir(), 'maestro-outside-'));
    made.push(outside);
    const specs = join(root.workflowDir, 'specs');
    mkdirSync(specs, { recursive: true });
    mkdirSync(join(dir, 'docs'));
    writeFileSync(join(dir, 'docs', 'shared.md'), spec('Shared inside'));
    symlinkSync(join(dir, 'docs', 'shared.md'), join(specs, 'shared.md'));
    writeFileSync(join(outside, 'planted.md'), spec('Planted outside'));
    const planted = join(specs, 'planted.md');
    symlinkSync(join(outside, 'planted.md'), planted);
    writeKnowhowFile(root, 'TIP-heron', { title: 'Heron tip', tags: ['heron'] }, 'heron word');
    writeFileSync(join(outside, 'KNOW-out.md'), '---\ntitle: "Heron planted knowhow"\ntype: tip\ntags: [heron]\n---\n\nheron word\n');
    const plantedKnowhow = join(root.workflowDir, 'knowhow', 'KNOW-out.md');
    symlinkSync(join(outside, 'KNOW-out.md'), plantedKnowhow);
    symlinkSync(join(outside, 'missing.md'), join(specs, 'dangling.md'));
    const env = { ...process.env, MAESTRO_HOME: root.home };

    // The project's own folder (`maestro search` there): every link read, as maestro-flow reads it.
    const cli = () => openKnowledge({ cwd: dir, includeGlobal: false, env });
    expect(withKnowledge(cli(), titles)).toEqual(['Heron planted knowhow', 'Heron tip', 'Planted outside', 'Shared inside']);

    // The daemon's view of the same project and the same index: what leads out is gone, and said.
    const confined = () => openKnowledge({ workflowRoot: dir, env });
    withKnowledge(confined(), (k) => {
      expect(titles(k)).toEqual(['Heron tip', 'Shared inside']);
      const said = k.health('spec').findings.filter((f) => f.code === 'link-outside');
      expect(said).toEqual([
        expect.objectContaining({ file: planted, severity: 'error', message: expect.stringContaining(`Refusing to read ${planted}: ${planted} is a symbolic link leading to ${join(outside, 'planted.md')}, outside the project ${dir}.`) }),
      ]);
      expect(k.health('knowhow').findings).toContainEqual(expect.objectContaining({ file: plantedKnowhow, code: 'link-outside' }));
    });

    // And back: each view reads what it reads, whichever indexed last.
    expect(withKnowledge(cli(), titles)).toContain('Planted outside');
    expect(withKnowledge(confined(), titles)).toEqual(['Heron tip', 'Shared inside']);
  });
});
