import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appendSpecEntry } from './specWriter.js';
import { linkedWorkspaces, resolveWorkflowRoot } from './root.js';

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
    const root = resolveWorkflowRoot({ workflowRoot: project, env: {} });
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
