/**
 * A repository whose `.workflow` is a symbolic link out of it (as a commit can make it): no knowledge writer writes
 * there. The guards below `.workflow/` (linkGuard.ts) compare a path with the real `.workflow/`, which is then the
 * outside folder itself; so each writer also holds `.workflow` to the repository (lib/repoWrites.ts), before its
 * lock and its first folder. Each refusal names the link and where it leads, and the outside folder is left as it
 * was: empty, or holding a corpus and a session made before the link (moved out, then linked back in).
 */
import { lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git } from '../../../test/helpers/repo.js';
import { project, rootAt, tmpDir } from '../../../test/helpers/knowledge2.js';
import { createLifecycleContext } from '../lifecycle/context.js';
import { promote } from '../lifecycle/promote/promote.js';
import { review } from '../lifecycle/reconcile/review.js';
import { sealRun, stage } from '../lifecycle/session/ops.js';
import { createRun, createSession, readRun, readSession, scanSessions, setActiveRun } from '../lifecycle/session/store.js';
import { addKnowhow, deprecateKnowhow } from './knowhowWriter.js';
import { withCorpusLock } from './lock.js';
import { appendSpecEntry, deprecateSpec } from './specWriter.js';

const lc = createLifecycleContext({ embedder: null });
const entry = { category: 'coding' as const, title: 'Rule', content: 'Body.', keywords: ['k'] };

/** Every file and link under `dir`, with its content (a link: where it points), links not followed. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isSymbolicLink()) out[p] = `-> ${lstatSync(p).size}`;
      else if (e.isDirectory()) walk(p);
      else out[p] = readFileSync(p, 'utf8');
    }
  };
  walk(dir);
  return out;
}

/** A git repository whose `.workflow` is a link to an empty folder outside it. */
function linkedOut() {
  const repo = tmpDir('maestro-repo-');
  git(repo, 'init', '-q');
  const outside = tmpDir('maestro-outside-');
  const link = join(repo, '.workflow');
  symlinkSync(outside, link);
  return { repo, outside, link, root: rootAt(repo) };
}

/**
 * A project whose corpus and session `s-1` (a sealed run with a pending candidate) were made in its real `.workflow/`,
 * then moved to a folder outside and linked back in: what a repository committing the link would show.
 */
function movedOut() {
  const p = project();
  git(p.dir, 'init', '-q');
  const doc = addKnowhow(p.root, { type: 'tip', title: 'Tip', body: 'b' });
  createSession(p.root, 's-1');
  createRun(p.root, 's-1', { runId: 'run-1' });
  const { candidate } = stage(p.root, { target: 'spec', title: 'Rule', content: 'Handlers validate input.', run: 'run-1', session: 's-1' }, process.env);
  sealRun(lc, p.root, 's-1', 'run-1');
  const outside = join(tmpDir('maestro-outside-'), 'wf');
  renameSync(p.root.workflowDir, outside);
  symlinkSync(outside, p.root.workflowDir);
  return { ...p, outside, link: p.root.workflowDir, knowhow: doc.id, candidate: candidate.candidate_id, before: tree(outside) };
}

const refusal = (link: string, repo: string) => new RegExp(`${link} is a symbolic link leading to .*, outside the repository ${repo}\\.`);

describe('a .workflow that links out of the repository', () => {
  it('gets no session, run or active run: refused before the store locks or makes a folder', () => {
    const { repo, outside, link, root } = linkedOut();
    expect(() => createSession(root, 's-1')).toThrow(`Refusing to write ${join(link, 'sessions', 's-1')}: ${link} is a symbolic link leading to ${join(outside, 'sessions', 's-1')}, outside the repository ${repo}.`);
    expect(() => createRun(root, 's-1', { runId: 'run-1' })).toThrow(refusal(link, repo));
    expect(() => setActiveRun(root, 's-1', 'run-1')).toThrow(refusal(link, repo));
    expect(readdirSync(outside)).toEqual([]);
  });

  it('gets no spec entry or knowhow document, nor their lock', () => {
    const { repo, outside, link, root } = linkedOut();
    const spec = join(link, 'specs', 'coding-conventions.md');
    expect(() => appendSpecEntry(root, entry)).toThrow(`Refusing to write ${spec}: ${link} is a symbolic link leading to ${join(outside, 'specs', 'coding-conventions.md')}, outside the repository ${repo}.`);
    expect(() => addKnowhow(root, { type: 'tip', title: 'Tip', body: 'b' })).toThrow(new RegExp(`^Refusing to write ${link}/knowhow/TIP-[^:]*\\.md: ${refusal(link, repo).source}`));
    expect(readdirSync(outside)).toEqual([]);
  });

  it('takes no corpus lock there, whoever asks for it', () => {
    const { repo, outside, link } = linkedOut();
    let ran = false;
    expect(() => withCorpusLock([join(link, 'specs', 'coding-conventions.md')], () => (ran = true))).toThrow(
      `Refusing to write ${join(link, '.maestro-corpus.lock')}: ${link} is a symbolic link leading to ${join(outside, '.maestro-corpus.lock')}, outside the repository ${repo}.`,
    );
    expect(ran).toBe(false);
    expect(readdirSync(outside)).toEqual([]);
  });

  it('changes nothing of a corpus and a session it leads to: no entry, ledger, receipt or promotion is written', () => {
    const m = movedOut();
    const refused = refusal(m.link, m.dir);
    expect(() => appendSpecEntry(m.root, entry)).toThrow(refused);
    expect(() => deprecateSpec(m.root, 'S-20260101-aaaa')).toThrow(refused);
    expect(() => deprecateKnowhow(m.root, m.knowhow)).toThrow(refused);
    expect(() => createSession(m.root, 's-1')).toThrow(refused);
    expect(() => createRun(m.root, 's-1', { runId: 'run-2' })).toThrow(refused);
    expect(() => stage(m.root, { target: 'spec', title: 'x', content: 'Queues drain first.', session: 's-1' }, process.env)).toThrow(refused);
    expect(() => review(lc, m.root, 's-1', { refresh: true })).toThrow(refused);
    expect(() => promote(lc, m.root, 's-1', { candidates: [m.candidate] })).toThrow(refused);
    expect(tree(m.outside)).toEqual(m.before);
  });

  it('reads no session or run there either', () => {
    const m = movedOut();
    const refused = new RegExp(`^Refusing to read .*: ${m.link} is a symbolic link leading to ${m.outside}/sessions.*, outside the repository ${m.dir}\\.`);
    expect(() => readSession(m.root, 's-1')).toThrow(refused);
    expect(() => readRun(m.root, 's-1', 'run-1')).toThrow(refused);
    expect(() => scanSessions(m.root)).toThrow(refused);
  });
});

describe('a session folder that links out of .workflow/', () => {
  it('gets no session: refused before its runs/ folder is made there', () => {
    const p = project();
    const outside = tmpDir('maestro-outside-');
    mkdirSync(join(p.root.workflowDir, 'sessions'));
    const link = join(p.root.workflowDir, 'sessions', 's-1');
    symlinkSync(outside, link, 'dir');
    expect(() => createSession(p.root, 's-1')).toThrow(`Refusing to write ${link}: it is a symbolic link (to ${outside}).`);
    expect(readdirSync(outside)).toEqual([]);
  });

  it('a runs/ folder linked out gets no run folder link, even one to the orchestrator', () => {
    const p = project();
    createSession(p.root, 's-1');
    const outside = tmpDir('maestro-outside-');
    rmSync(join(p.root.workflowDir, 'sessions', 's-1', 'runs'), { recursive: true });
    symlinkSync(outside, join(p.root.workflowDir, 'sessions', 's-1', 'runs'), 'dir');
    const runs = join(p.root.home, 'runs', 'task-1', 'run-1');
    mkdirSync(runs, { recursive: true });
    const link = join(p.root.workflowDir, 'sessions', 's-1', 'runs');
    expect(() => createRun(p.root, 's-1', { runId: 'run-1', linkTo: runs })).toThrow(`Refusing to write ${link}: it is a symbolic link (to ${outside}).`);
    expect(readdirSync(outside)).toEqual([]);
  });
});
