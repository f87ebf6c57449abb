import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appendSpecEntry } from './specWriter.js';
import { knowhowDirs, linkedWorkspaces, resolveWorkflowRoot, specDirs, workspaceLinks } from './root.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('resolveWorkflowRoot with a root named', () => {
  it('refuses one whose folder is not there (a typo, a project moved away), so a write cannot create it', () => {
    const parent = mkdtempSync(join(tmpdir(), 'maestro-root-'));
    dirs.push(parent);
    const gone = join(parent, 'shop');
    expect(() => resolveWorkflowRoot({ workflowRoot: gone, env: {} })).toThrow(
      expect.objectContaining({ code: 'BAD_INPUT', message: `The knowledge root ${gone} does not exist (moved or deleted?); nothing was read or written.` }),
    );
    expect(existsSync(gone)).toBe(false);
    // A project folder that is there, without a .workflow yet: its first write makes one.
    mkdirSync(gone);
    const root = resolveWorkflowRoot({ workflowRoot: gone, env: {} });
    appendSpecEntry(root, { category: 'coding', title: 'Use tabs', content: 'Indent with tabs.', keywords: ['tabs'] });
    expect(existsSync(join(gone, '.workflow'))).toBe(true);
  });
});

const BOTH = { spec: true, knowhow: true };

describe('linked workspaces', () => {
  it('names a workspaces.json that is not JSON by line and column, never quoting it (it may be a link to a secret), and reads none of it', () => {
    const project = mkdtempSync(join(tmpdir(), 'maestro-root-'));
    const outside = mkdtempSync(join(tmpdir(), 'maestro-outside-'));
    dirs.push(project, outside);
    mkdirSync(join(project, '.workflow'));
    const secret = join(outside, 'key.txt');
    writeFileSync(secret, 'TOPSECRET-KEY\n');
    const file = join(project, '.workflow', 'workspaces.json');
    symlinkSync(secret, file);
    const root = resolveWorkflowRoot({ cwd: project, env: {} }); // `maestro search` in the project: it reads the link
    expect(root.confined).toBe(false);
    expect(workspaceLinks(root)).toEqual({
      workspaces: [],
      findings: [{ file, line: 1, severity: 'error', code: 'linked-workspaces', message: `${file} is not valid JSON (line 1, column 1). Its linked workspaces are not read; the project's own knowledge is.` }],
    });
    expect(specDirs(root).map((d) => d.scope)).toEqual(['global', 'project', 'team', 'personal']);
  });

  it("reads maestro-flow's .workflow/config.json (workspaces.linked, what each shares), keeps its other keys' meaning to it, and says what is wrong entry by entry", () => {
    const project = mkdtempSync(join(tmpdir(), 'maestro-root-'));
    dirs.push(project);
    mkdirSync(join(project, '.workflow'));
    const file = join(project, '.workflow', 'config.json');
    const linked = [
      { name: 'api', path: '../api', share: ['spec', 'knowhow', 'codebase'] },
      { name: 'docs', path: 'docs', share: ['knowhow'] },
      { name: 'web', path: '/srv/web/.workflow', share: [] },
      { name: 'has space', path: 'x', share: ['spec'] },
      { name: 'api', path: 'again', share: ['spec'] },
      { name: 'nopath', share: ['spec'] },
      { name: 'odd', path: 'odd', share: 'spec' },
    ];
    writeFileSync(file, JSON.stringify({ specInjection: { enabled: true }, workspaces: { linked } }));
    const root = resolveWorkflowRoot({ cwd: project, env: {} });
    const { workspaces, findings } = workspaceLinks(root);
    expect(workspaces).toEqual([
      { name: 'api', workflowDir: join(project, '..', 'api', '.workflow'), shares: BOTH },
      { name: 'docs', workflowDir: join(project, 'docs', '.workflow'), shares: { spec: false, knowhow: true } },
      { name: 'web', workflowDir: '/srv/web/.workflow', shares: { spec: false, knowhow: false } },
    ]);
    expect(findings.map((f) => `${f.severity} ${f.message}`)).toEqual([
      `warning ${file}: workspaces.linked[2] ("web") shares neither specs nor knowhow: add "share": ["spec", "knowhow"] to read them.`,
      `error ${file}: workspaces.linked[3] needs a "name" of letters, digits, ".", "_" and "-"; it is not read.`,
      `error ${file}: workspaces.linked[4]: the name "api" is taken by an earlier workspace; it is not read.`,
      `error ${file}: workspaces.linked[5] ("nopath") needs a "path"; it is not read.`,
      `error ${file}: workspaces.linked[6] ("odd"): "share" must be a list like ["spec", "knowhow"]; it is not read.`,
    ]);
    // Specs from what shares specs, knowhow from what shares knowhow.
    expect(specDirs(root).filter((d) => d.workspace).map((d) => d.workspace)).toEqual(['api']);
    expect(knowhowDirs(root).filter((d) => d.workspace).map((d) => d.workspace)).toEqual(['api', 'docs']);
    // More than 100: the first 100 read, said; a file over 1 MB: none read, said.
    writeFileSync(file, JSON.stringify({ workspaces: { linked: Array.from({ length: 150 }, (_, i) => ({ name: `w${i}`, path: `w${i}`, share: ['spec'] })) } }));
    const many = workspaceLinks(root);
    expect(many.workspaces).toHaveLength(100);
    expect(many.findings.map((f) => f.message)).toEqual([`${file} declares 150 linked workspaces, more than 100: the first 100 are read.`]);
    writeFileSync(file, JSON.stringify({ workspaces: { linked: [] }, padding: 'x'.repeat(1024 * 1024) }));
    expect(workspaceLinks(root).findings.map((f) => f.message)).toEqual([expect.stringMatching(/is 1,048,6\d\d bytes, more than 1,048,576\. Its linked workspaces are not read; the project's own knowledge is\.$/)]);
    // maestro-flow's config.json without linked workspaces, and one with a wrong shape.
    writeFileSync(file, JSON.stringify({ specInjection: { enabled: true } }));
    expect(workspaceLinks(root)).toEqual({ workspaces: [], findings: [] });
    writeFileSync(file, JSON.stringify({ workspaces: [{ name: 'api', path: '../api' }] }));
    expect(workspaceLinks(root).findings.map((f) => f.message)).toEqual([
      `${file}: "workspaces.linked" must be a list of {name, path, share}, like {"workspaces":{"linked":[{"name":"api","path":"../api","share":["spec","knowhow"]}]}}. Its linked workspaces are not read; the project's own knowledge is.`,
    ]);
  });
});

describe('a workspaces.json that is a link to a file outside the project', () => {
  /** A project whose .workflow/workspaces.json links to a file outside naming a workspace, also outside, with a spec. */
  function linkedOut() {
    const project = mkdtempSync(join(tmpdir(), 'maestro-root-'));
    const outside = mkdtempSync(join(tmpdir(), 'maestro-outside-'));
    dirs.push(project, outside);
    mkdirSync(join(project, '.workflow', 'specs'), { recursive: true });
    mkdirSync(join(outside, 'theirs', '.workflow', 'specs'), { recursive: true });
    writeFileSync(join(outside, 'theirs', '.workflow', 'specs', 'learnings.md'), '<spec-entry category="learning" keywords="vault" date="2026-11-01" title="Vault password">\nhunter2-OUTSIDE\n</spec-entry>\n');
    const real = join(outside, 'workspaces.json');
    writeFileSync(real, JSON.stringify({ workspaces: [{ name: 'theirs', path: join(outside, 'theirs') }] }));
    const file = join(project, '.workflow', 'workspaces.json');
    symlinkSync(real, file);
    return { project, file, real, outside };
  }

  it('is not read by a confined root (the daemon, an agent, --workflow-root): the finding names the file and where it leads; the project\'s own knowledge is read', () => {
    const { project, file, real } = linkedOut();
    const root = resolveWorkflowRoot({ workflowRoot: project, env: {}, workspaceAllowed: () => true });
    expect(workspaceLinks(root)).toEqual({
      workspaces: [],
      findings: [expect.objectContaining({ file, severity: 'error', message: `Refusing to read ${file}: ${file} is a symbolic link leading to ${real}, outside the project ${project}. Knowledge is read and written only inside it. Nothing was read or written. Replace the link with a real folder or file inside ${project}, or remove it. Its linked workspaces are not read; the project's own knowledge is.` })],
    });
    expect(specDirs(root).map((d) => d.scope)).toEqual(['project', 'team', 'personal']);
    expect(knowhowDirs(root).map((d) => d.workspace)).toEqual([null]);
  });

  it('is read by maestro search in the project (unconfined), as maestro-flow does; a link inside the project is read by a confined root too', () => {
    const { project, outside, file } = linkedOut();
    const cli = resolveWorkflowRoot({ cwd: project, env: {} });
    expect(linkedWorkspaces(cli)).toEqual([{ name: 'theirs', workflowDir: join(outside, 'theirs', '.workflow'), shares: BOTH }]);
    rmSync(file);
    writeFileSync(join(project, '.workflow', 'real-workspaces.json'), JSON.stringify({ workspaces: [{ name: 'api', path: 'api' }] }));
    symlinkSync(join(project, '.workflow', 'real-workspaces.json'), file);
    expect(linkedWorkspaces(resolveWorkflowRoot({ workflowRoot: project, env: {} }))).toEqual([{ name: 'api', workflowDir: join(project, 'api', '.workflow'), shares: BOTH }]);
  });
});
