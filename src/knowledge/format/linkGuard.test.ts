/**
 * Knowledge writes never follow a symbolic link out of `.workflow/` (linkGuard.ts): a linked file
 * or folder is refused with the path and what to do, and nothing is written — not the target, not
 * the lock or temporary files beside it. A link to a folder inside the root still works.
 */
import { lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { tempRoot } from '../../../test/helpers/knowledge.js';
import { project, tmpDir } from '../../../test/helpers/knowledge2.js';
import { INDEX_FILE, openIndex } from '../index/store.js';
import { createLifecycleContext } from '../lifecycle/context.js';
import { promote } from '../lifecycle/promote/promote.js';
import { promotionPath } from '../lifecycle/promote/promotion.js';
import { sealRun, stage } from '../lifecycle/session/ops.js';
import { createRun, createSession } from '../lifecycle/session/store.js';
import { addKnowhow, deprecateKnowhow } from './knowhowWriter.js';
import { appendSpecEntry, deprecateSpec } from './specWriter.js';

const isLink = (p: string) => lstatSync(p).isSymbolicLink();
const entry = { title: 'Rule', content: 'Body.', keywords: ['k'] };

/** A folder outside every project, holding `files`. */
function outsideDir(files: Record<string, string> = {}): string {
  const dir = tmpDir('maestro-outside-');
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

describe('symbolic links out of .workflow/', () => {
  it('refuses a spec file that is a link, leaving the outside file and the link as they were', () => {
    const { root } = tempRoot();
    const outside = join(outsideDir({ 'outside-spec.md': 'outside content\n' }), 'outside-spec.md');
    const specs = join(root.workflowDir, 'specs');
    mkdirSync(specs);
    const link = join(specs, 'architecture-constraints.md');
    symlinkSync(outside, link);
    expect(() => appendSpecEntry(root, { category: 'arch', ...entry })).toThrow(
      expect.objectContaining({ code: 'BAD_INPUT', message: expect.stringContaining(`Refusing to write ${link}: it is a symbolic link (to ${outside}).`) }),
    );
    expect(() => appendSpecEntry(root, { category: 'arch', ...entry })).toThrow(/search skips linked files\. Nothing was written\. Replace the link/);
    expect(readFileSync(outside, 'utf8')).toBe('outside content\n');
    expect(isLink(link)).toBe(true);
    expect(readdirSync(specs)).toEqual(['architecture-constraints.md']);
  });

  it('refuses a specs folder that is a link leading outside, writing nothing there', () => {
    const { root } = tempRoot();
    const outside = outsideDir();
    const specs = join(root.workflowDir, 'specs');
    symlinkSync(outside, specs);
    const target = join(specs, 'coding-conventions.md');
    expect(() => appendSpecEntry(root, { category: 'coding', ...entry })).toThrow(
      expect.objectContaining({ code: 'BAD_INPUT', message: expect.stringContaining(`Refusing to write ${target}: ${specs} is a symbolic link leading to ${join(realpathSync(outside), 'coding-conventions.md')}, outside the project's ${root.workflowDir}`) }),
    );
    expect(readdirSync(outside)).toEqual([]);
    expect(isLink(specs)).toBe(true);
  });

  it('still writes through a folder link that stays inside the root', () => {
    const { root } = tempRoot();
    mkdirSync(join(root.workflowDir, 'real-specs'));
    symlinkSync(join(root.workflowDir, 'real-specs'), join(root.workflowDir, 'specs'));
    expect(appendSpecEntry(root, { category: 'coding', ...entry }).outcome).toBe('created');
    expect(readdirSync(join(root.workflowDir, 'real-specs'))).toContain('coding-conventions.md');
  });

  it('refuses to change entries or knowhow that a linked folder holds outside the root', () => {
    const { root } = tempRoot();
    const first = tempRoot(); // written in a real folder, then moved out and linked back in
    appendSpecEntry(first.root, { category: 'coding', ...entry, sid: 'S-20260101-aaaa' });
    const doc = addKnowhow(first.root, { type: 'tip', title: 'Tip', body: 'b' });
    const outside = tmpDir('maestro-outside-');
    for (const sub of ['specs', 'knowhow']) {
      renameSync(join(first.root.workflowDir, sub), join(outside, sub));
      symlinkSync(join(outside, sub), join(root.workflowDir, sub));
    }
    const before = readFileSync(join(outside, 'specs', 'coding-conventions.md'), 'utf8');
    expect(() => deprecateSpec(root, 'S-20260101-aaaa')).toThrow(/is a symbolic link leading to .*outside the project's/);
    expect(() => deprecateKnowhow(root, doc.id)).toThrow(/is a symbolic link leading to .*outside the project's/);
    expect(() => addKnowhow(root, { type: 'tip', title: 'Another', body: 'b' })).toThrow(/is a symbolic link leading to/);
    expect(readFileSync(join(outside, 'specs', 'coding-conventions.md'), 'utf8')).toBe(before);
    expect(readdirSync(join(outside, 'specs'))).toEqual(['coding-conventions.md']);
    expect(readdirSync(join(outside, 'knowhow'))).toEqual([doc.filename]);
  });

  it('refuses a promotion into a linked specs folder before its intent is written', () => {
    const lc = createLifecycleContext({ embedder: null });
    const p = project({ specs: false });
    createSession(p.root, 's-1');
    createRun(p.root, 's-1', { runId: 'run-1' });
    const { candidate } = stage(p.root, { target: 'spec', title: 'Rule', content: 'Handlers validate input.', run: 'run-1', session: 's-1' }, process.env);
    sealRun(lc, p.root, 's-1', 'run-1');
    const outside = outsideDir();
    const specs = join(p.root.workflowDir, 'specs');
    rmSync(specs, { recursive: true });
    symlinkSync(outside, specs);
    expect(() => promote(lc, p.root, 's-1', { candidates: [candidate.candidate_id] })).toThrow(/learnings\.md: .*specs is a symbolic link leading to/);
    expect(readdirSync(outside)).toEqual([]);
    expect(() => lstatSync(promotionPath(join(p.root.workflowDir, 'sessions', 's-1', 'runs', 'run-1')))).toThrow(/ENOENT/);
  });

  it('promotes through a run folder Maestro linked to the orchestrator, but not through a linked receipt', () => {
    const lc = createLifecycleContext({ embedder: null });
    const p = project({ specs: false });
    const runDir = join(p.root.home, 'runs', 'task-1', 'run-1'); // the orchestrator's run directory, in $MAESTRO_HOME/runs/
    createSession(p.root, 's-1');
    createRun(p.root, 's-1', { runId: 'run-1', linkTo: runDir });
    const first = stage(p.root, { target: 'spec', title: 'One', content: 'First rule.', run: 'run-1', session: 's-1' }, process.env).candidate;
    const second = stage(p.root, { target: 'spec', title: 'Two', content: 'Second rule.', run: 'run-1', session: 's-1' }, process.env).candidate;
    sealRun(lc, p.root, 's-1', 'run-1');
    expect(promote(lc, p.root, 's-1', { candidates: [first.candidate_id] }).promoted).toHaveLength(1);
    const receipt = promotionPath(join(p.root.workflowDir, 'sessions', 's-1', 'runs', 'run-1'));
    const moved = join(outsideDir(), 'receipt.json');
    renameSync(receipt, moved);
    symlinkSync(moved, receipt);
    const before = readFileSync(moved, 'utf8');
    expect(() => promote(lc, p.root, 's-1', { candidates: [second.candidate_id] })).toThrow(`Refusing to read ${receipt}: ${receipt} is a symbolic link leading to ${moved}, outside its folder`); // refused when read, before any write
    expect(readFileSync(moved, 'utf8')).toBe(before);
    expect(isLink(receipt)).toBe(true);
  });

  it('keeps the search index in memory when its file is a link, leaving the linked database alone', () => {
    const { root } = tempRoot();
    const outside = join(outsideDir(), 'victim.db');
    const victim = new Database(outside);
    victim.exec('CREATE TABLE mine (x)');
    victim.close();
    symlinkSync(outside, join(root.workflowDir, INDEX_FILE));
    const h = openIndex({ workflowDir: root.workflowDir, sources: [] });
    try {
      expect(h.location).toBe(':memory:');
    } finally {
      h.close();
    }
    const after = new Database(outside, { readonly: true });
    try {
      expect(after.prepare('SELECT name FROM sqlite_master').pluck().all()).toEqual(['mine']);
    } finally {
      after.close();
    }
  });

  it("makes no index in another project's .workflow/ that this one's is a link to", () => {
    const other = tempRoot().root;
    const { root } = tempRoot();
    rmSync(root.workflowDir, { recursive: true });
    symlinkSync(other.workflowDir, root.workflowDir);
    const before = readdirSync(other.workflowDir).sort();
    const h = openIndex({ workflowDir: root.workflowDir, sources: [] });
    try {
      expect(h.location).toBe(':memory:');
    } finally {
      h.close();
    }
    expect(readdirSync(other.workflowDir).sort()).toEqual(before);
  });
});
