import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appendSpecEntry } from './specWriter.js';
import { knowhowDirs, linkedWorkspaces, resolveWorkflowRoot, specDirs } from './root.js';

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

describe('linked workspaces', () => {
  it('names a workspaces.json that is not JSON by line and column, never quoting it (it may be a link to a secret)', () => {
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
    let message = '';
    try {
      linkedWorkspaces(root);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toBe(`${file} is not valid JSON (line 1, column 1).`);
    expect(message).not.toContain('TOPSECRET');
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

  it('is not read by a confined root (the daemon, an agent, --workflow-root): the refusal names the file and where it leads', () => {
    const { project, file, real } = linkedOut();
    const root = resolveWorkflowRoot({ workflowRoot: project, env: {}, workspaceAllowed: () => true });
    const refused = expect.objectContaining({ code: 'PATH_OUTSIDE_PROJECTS', message: `Refusing to read ${file}: ${file} is a symbolic link leading to ${real}, outside the project ${project}. Knowledge is read and written only inside it. Nothing was read or written. Replace the link with a real folder or file inside ${project}, or remove it.` });
    expect(() => linkedWorkspaces(root)).toThrow(refused);
    expect(() => specDirs(root)).toThrow(refused);
    expect(() => knowhowDirs(root)).toThrow(refused);
  });

  it('is read by maestro search in the project (unconfined), as maestro-flow does; a link inside the project is read by a confined root too', () => {
    const { project, outside, file } = linkedOut();
    const cli = resolveWorkflowRoot({ cwd: project, env: {} });
    expect(linkedWorkspaces(cli)).toEqual([{ name: 'theirs', workflowDir: join(outside, 'theirs', '.workflow') }]);
    rmSync(file);
    writeFileSync(join(project, '.workflow', 'real-workspaces.json'), JSON.stringify({ workspaces: [{ name: 'api', path: 'api' }] }));
    symlinkSync(join(project, '.workflow', 'real-workspaces.json'), file);
    expect(linkedWorkspaces(resolveWorkflowRoot({ workflowRoot: project, env: {} }))).toEqual([{ name: 'api', workflowDir: join(project, 'api', '.workflow') }]);
  });
});
