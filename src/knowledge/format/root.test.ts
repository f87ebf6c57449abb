import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appendSpecEntry } from './specWriter.js';
import { resolveWorkflowRoot } from './root.js';

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
